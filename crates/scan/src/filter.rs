//! Row filters of the form `column OP literal`.
//!
//! A [`Filter`] is parsed from text ([`Filter::parse`]), checked against a
//! schema ([`Filter::check`]), evaluated on record batches
//! ([`Filter::evaluate`], [`Filter::apply`]) and used to skip Parquet row
//! groups whose statistics prove that no row matches
//! ([`Filter::may_match_row_group`]).
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
//! * Dates (`Date32`, `Date64`) compare with `'YYYY-MM-DD'` strings, or
//!   with integers in the column's unit (days, milliseconds).
//! * Dictionary-encoded columns compare by their values.

use std::{cmp::Ordering, fmt, str::FromStr, sync::Arc};

use arrow_array::{
    Array, ArrayRef, BooleanArray, Date32Array, Date64Array, Float64Array, Int64Array,
    LargeStringArray, RecordBatch, Scalar, StringArray, StringViewArray, UInt64Array,
    cast::AsArray,
};
use arrow_schema::{DataType, Schema};
use parquet::{
    basic::{ConvertedType, LogicalType, Type as PhysicalType},
    file::{metadata::RowGroupMetaData, statistics::Statistics},
};

use crate::Error;

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    /// `=` or `==`.
    Eq,
    /// `!=` or `<>`.
    NotEq,
    /// `<`.
    Lt,
    /// `<=`.
    LtEq,
    /// `>`.
    Gt,
    /// `>=`.
    GtEq,
}

impl CmpOp {
    /// The operator's usual symbol.
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "=",
            CmpOp::NotEq => "!=",
            CmpOp::Lt => "<",
            CmpOp::LtEq => "<=",
            CmpOp::Gt => ">",
            CmpOp::GtEq => ">=",
        }
    }

    /// Whether `value OP literal` holds, given how `value` compares to the
    /// literal.
    fn holds(self, ord: Ordering) -> bool {
        match self {
            CmpOp::Eq => ord == Ordering::Equal,
            CmpOp::NotEq => ord != Ordering::Equal,
            CmpOp::Lt => ord == Ordering::Less,
            CmpOp::LtEq => ord != Ordering::Greater,
            CmpOp::Gt => ord == Ordering::Greater,
            CmpOp::GtEq => ord != Ordering::Less,
        }
    }
}

impl fmt::Display for CmpOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

/// The constant a column is compared with.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    /// An integer, such as `42` or `-7`.
    Int(i64),
    /// A number with a fraction or exponent (or too large for `i64`), such
    /// as `2.5`, `1e9`, `inf` or `nan`.
    Float(f64),
    /// A quoted string, `'Ann'` or `"Ann"`.
    Str(String),
    /// `true` or `false`.
    Bool(bool),
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Int(v) => write!(f, "{v}"),
            Literal::Float(v) => write!(f, "{v:?}"),
            Literal::Str(s) => write!(f, "'{}'", s.replace('\'', "''")),
            Literal::Bool(b) => write!(f, "{b}"),
        }
    }
}

/// A row filter `column OP literal` on a top-level column.
#[derive(Debug, Clone, PartialEq)]
pub struct Filter {
    /// The column compared.
    pub column: String,
    /// The comparison.
    pub op: CmpOp,
    /// The constant compared with.
    pub value: Literal,
}

impl fmt::Display for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.column.chars().all(is_ident_char) && !self.column.is_empty() {
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

impl FromStr for Filter {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Filter::parse(s)
    }
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '.'
}

/// A cursor over a filter expression, for error messages that point at
/// the problem.
struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        &self.text[self.pos..]
    }

    fn skip_ws(&mut self) {
        let rest = self.rest();
        self.pos += rest.len() - rest.trim_start().len();
    }

    fn error(&self, expected: &str) -> Error {
        let found = match self.rest().chars().next() {
            Some(c) => format!("'{c}' at position {}", self.pos),
            None => "the end".to_string(),
        };
        Error::InvalidConfig(format!(
            "invalid filter \"{}\": expected {expected}, found {found} \
             (filters look like: col > 5, name = 'Ann', flag != true)",
            self.text
        ))
    }

    /// A run of characters up to the closing `quote`; two quotes in a row
    /// stand for one.
    fn quoted(&mut self, quote: char) -> Result<String, Error> {
        let start = self.pos;
        self.pos += quote.len_utf8();
        let mut out = String::new();
        loop {
            let Some(c) = self.rest().chars().next() else {
                self.pos = start;
                return Err(self.error(&format!("a closing {quote} for the string")));
            };
            self.pos += c.len_utf8();
            if c == quote {
                if self.rest().starts_with(quote) {
                    self.pos += quote.len_utf8();
                    out.push(quote);
                } else {
                    return Ok(out);
                }
            } else {
                out.push(c);
            }
        }
    }

    fn column(&mut self) -> Result<String, Error> {
        if self.rest().starts_with('"') {
            let name = self.quoted('"')?;
            if name.is_empty() {
                return Err(self.error("a non-empty column name"));
            }
            return Ok(name);
        }
        let len = self
            .rest()
            .find(|c: char| !is_ident_char(c))
            .unwrap_or(self.rest().len());
        if len == 0 {
            return Err(self.error("a column name (letters, digits, '_', '.')"));
        }
        let name = self.rest()[..len].to_string();
        self.pos += len;
        Ok(name)
    }

    fn op(&mut self) -> Result<CmpOp, Error> {
        const OPS: [(&str, CmpOp); 8] = [
            ("==", CmpOp::Eq),
            ("!=", CmpOp::NotEq),
            ("<>", CmpOp::NotEq),
            ("<=", CmpOp::LtEq),
            (">=", CmpOp::GtEq),
            ("=", CmpOp::Eq),
            ("<", CmpOp::Lt),
            (">", CmpOp::Gt),
        ];
        for (sym, op) in OPS {
            if self.rest().starts_with(sym) {
                self.pos += sym.len();
                return Ok(op);
            }
        }
        Err(self.error("an operator (=, ==, !=, <>, <, <=, >, >=)"))
    }

    fn literal(&mut self) -> Result<Literal, Error> {
        let rest = self.rest();
        if rest.starts_with('\'') {
            return self.quoted('\'').map(Literal::Str);
        }
        if rest.starts_with('"') {
            return self.quoted('"').map(Literal::Str);
        }
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '+' | '-')))
            .unwrap_or(rest.len());
        let word = &rest[..len];
        let lit = if word.eq_ignore_ascii_case("true") {
            Some(Literal::Bool(true))
        } else if word.eq_ignore_ascii_case("false") {
            Some(Literal::Bool(false))
        } else if let Ok(v) = word.parse::<i64>() {
            Some(Literal::Int(v))
        } else if word.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '.' | '+' | '-'))
            || ["inf", "infinity", "nan"]
                .iter()
                .any(|w| word.eq_ignore_ascii_case(w))
        {
            word.parse::<f64>().ok().map(Literal::Float)
        } else {
            None
        };
        match lit {
            Some(lit) => {
                self.pos += len;
                Ok(lit)
            }
            None => Err(self.error("a number, a 'quoted string', true or false")),
        }
    }
}

impl Filter {
    /// Parses `column OP literal`, as in `age > 30`, `x<=2.5`,
    /// `name = 'Ann'`, `name == "Ann"`, `flag != true`, `"col name" <> 3`.
    ///
    /// Column names are runs of `[A-Za-z0-9_.]`, or any text in double
    /// quotes. Strings are in single or double quotes; a quote is doubled
    /// inside them (`'it''s'`). Whitespace around the parts is ignored.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidConfig`] showing the expression and what was
    /// expected where.
    pub fn parse(text: &str) -> Result<Filter, Error> {
        let mut p = Parser { text, pos: 0 };
        p.skip_ws();
        let column = p.column()?;
        p.skip_ws();
        let op = p.op()?;
        p.skip_ws();
        let value = p.literal()?;
        p.skip_ws();
        if !p.rest().is_empty() {
            return Err(p.error("the end of the filter"));
        }
        Ok(Filter { column, op, value })
    }

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
    /// As [`Filter::check`] on the batch's schema; [`Error::Arrow`] when a
    /// kernel fails.
    pub fn evaluate(&self, batch: &RecordBatch) -> Result<BooleanArray, Error> {
        let column = batch
            .column_by_name(&self.column)
            .ok_or_else(|| self.unknown_column(&batch.schema()))?;
        self.evaluate_array(column.as_ref())
    }

    /// The rows of `batch` that match.
    ///
    /// # Errors
    ///
    /// As [`Filter::evaluate`].
    pub fn apply(&self, batch: &RecordBatch) -> Result<RecordBatch, Error> {
        let mask = self.evaluate(batch)?;
        Ok(arrow_select::filter::filter_record_batch(batch, &mask)?)
    }

    /// Which values of `array` match (nulls give false).
    fn evaluate_array(&self, array: &dyn Array) -> Result<BooleanArray, Error> {
        if let Some(dict) = array.as_any_dictionary_opt() {
            // Compare each distinct value once, then look the keys up.
            let values = self.evaluate_array(dict.values().as_ref())?;
            let taken = arrow_select::take::take(&values, dict.keys(), None)?;
            return Ok(nulls_to_false(taken.as_boolean().clone()));
        }
        let result = match self.plan(array.data_type())? {
            Plan::Const(v) => (0..array.len())
                .map(|i| v && array.is_valid(i))
                .collect::<Vec<bool>>()
                .into(),
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
        Ok(nulls_to_false(result))
    }

    /// How to compare a column of type `data_type` with the literal.
    fn plan(&self, data_type: &DataType) -> Result<Plan, Error> {
        use DataType as D;
        let mismatch = || {
            let wanted = match &self.value {
                Literal::Int(_) => "an integer",
                Literal::Float(_) => "a number",
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
            D::Timestamp(..) | D::Time32(_) | D::Time64(_) | D::Duration(_) | D::Interval(_) => {
                return Err(Error::InvalidConfig(format!(
                    "filter \"{self}\": column '{}' has type {data_type}; filters on time \
                     types other than dates are not supported",
                    self.column
                )));
            }
            _ => {
                return Err(Error::InvalidConfig(format!(
                    "filter \"{self}\": column '{}' has type {data_type}, which filters do not \
                     support (integers, floats, strings, booleans and dates are)",
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
        match self.value {
            Literal::Int(v) => Some(IntBound::Value(i128::from(v))),
            Literal::Float(f) => Some(int_bound_of_float(self.op, f)),
            _ => None,
        }
    }

    /// The literal as a float, for float columns.
    fn float_value(&self) -> Option<f64> {
        match self.value {
            Literal::Int(v) => Some(v as f64),
            Literal::Float(f) => Some(f),
            _ => None,
        }
    }

    /// Whether any row of row group `rg` may match, judged from the
    /// statistics of column chunk `leaf` (the Parquet leaf column of this
    /// filter's column). False only when the statistics prove that no row
    /// matches: the row group is empty, every value is null, or the
    /// min/max range excludes the literal.
    ///
    /// Conservative: missing statistics, a leaf index out of range, types
    /// whose statistics order is not certain here (unsigned integers,
    /// decimals, dates, timestamps, half floats, binary, old-style
    /// byte-array statistics), and float columns that may hold NaN all give
    /// true.
    pub fn may_match_row_group(&self, rg: &RowGroupMetaData, leaf: usize) -> bool {
        if rg.num_rows() <= 0 {
            return false;
        }
        let Some(chunk) = rg.columns().get(leaf) else {
            return true;
        };
        let Some(stats) = chunk.statistics() else {
            return true;
        };
        let descr = chunk.column_descr();
        if descr.max_rep_level() == 0
            && stats
                .null_count_opt()
                .is_some_and(|n| n >= rg.num_rows() as u64)
        {
            return false;
        }
        let logical = descr.logical_type_ref();
        let converted = descr.converted_type();
        match (stats, descr.physical_type()) {
            (Statistics::Int32(_), PhysicalType::INT32)
            | (Statistics::Int64(_), PhysicalType::INT64) => {
                let signed_int = match logical {
                    Some(LogicalType::Integer(t)) => t.is_signed,
                    Some(_) => false,
                    None => matches!(
                        converted,
                        ConvertedType::NONE
                            | ConvertedType::INT_8
                            | ConvertedType::INT_16
                            | ConvertedType::INT_32
                            | ConvertedType::INT_64
                    ),
                };
                let (min, max) = match stats {
                    Statistics::Int32(s) => (
                        s.min_opt().map(|v| i128::from(*v)),
                        s.max_opt().map(|v| i128::from(*v)),
                    ),
                    Statistics::Int64(s) => (
                        s.min_opt().map(|v| i128::from(*v)),
                        s.max_opt().map(|v| i128::from(*v)),
                    ),
                    _ => (None, None),
                };
                let (true, Some(min), Some(max)) = (signed_int, min, max) else {
                    return true;
                };
                match self.int_bound() {
                    Some(IntBound::Const(v)) => v,
                    Some(IntBound::Value(v)) => range_may_match(
                        self.op,
                        min.cmp(&v),
                        max.cmp(&v),
                        stats.min_is_exact() && stats.max_is_exact(),
                    ),
                    None => true,
                }
            }
            (Statistics::Float(_), PhysicalType::FLOAT)
            | (Statistics::Double(_), PhysicalType::DOUBLE) => {
                // Writers leave NaN out of min/max; only a count of zero
                // NaNs makes the range cover every value.
                if logical.is_some()
                    || stats.is_min_max_deprecated()
                    || stats.nan_count_opt() != Some(0)
                {
                    return true;
                }
                let (min, max) = match stats {
                    Statistics::Float(s) => (
                        s.min_opt().map(|v| f64::from(*v)),
                        s.max_opt().map(|v| f64::from(*v)),
                    ),
                    Statistics::Double(s) => (s.min_opt().copied(), s.max_opt().copied()),
                    _ => (None, None),
                };
                let (Some(mut min), Some(mut max), Some(v)) = (min, max, self.float_value()) else {
                    return true;
                };
                if min.is_nan() || max.is_nan() {
                    return true;
                }
                // Writers may record either zero for a range touching zero.
                if min == 0.0 {
                    min = -0.0;
                }
                if max == 0.0 {
                    max = 0.0;
                }
                range_may_match(self.op, min.total_cmp(&v), max.total_cmp(&v), false)
            }
            (Statistics::ByteArray(s), PhysicalType::BYTE_ARRAY) => {
                let is_string = match logical {
                    Some(LogicalType::String) => true,
                    Some(_) => false,
                    None => converted == ConvertedType::UTF8,
                };
                let Literal::Str(v) = &self.value else {
                    return true;
                };
                let (true, false, Some(min), Some(max)) = (
                    is_string,
                    stats.is_min_max_deprecated(),
                    s.min_opt(),
                    s.max_opt(),
                ) else {
                    return true;
                };
                let v = v.as_bytes();
                range_may_match(
                    self.op,
                    min.data().cmp(v),
                    max.data().cmp(v),
                    stats.min_is_exact() && stats.max_is_exact(),
                )
            }
            (Statistics::Boolean(s), PhysicalType::BOOLEAN) => {
                let (Literal::Bool(v), Some(min), Some(max)) =
                    (&self.value, s.min_opt(), s.max_opt())
                else {
                    return true;
                };
                range_may_match(self.op, min.cmp(v), max.cmp(v), true)
            }
            _ => true,
        }
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

fn nulls_to_false(mask: BooleanArray) -> BooleanArray {
    if mask.null_count() == 0 {
        mask
    } else {
        arrow_select::filter::prep_null_mask_filter(&mask)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{
        BooleanArray, DictionaryArray, Float64Array, Int32Array, Int64Array, StringArray,
        TimestampMillisecondArray, UInt8Array, UInt64Array, types::Int32Type,
    };
    use arrow_schema::{Field, TimeUnit};
    use parquet::{arrow::ArrowWriter, file::properties::WriterProperties};
    use strata_gen::rng::RowRng;

    fn f(column: &str, op: CmpOp, value: Literal) -> Filter {
        Filter {
            column: column.into(),
            op,
            value,
        }
    }

    #[test]
    fn parses_good_filters() {
        use CmpOp::*;
        use Literal::*;
        let cases = [
            ("col > 5", f("col", Gt, Int(5))),
            ("x<=2.5", f("x", LtEq, Float(2.5))),
            ("name = 'Ann'", f("name", Eq, Str("Ann".into()))),
            ("name == \"Ann\"", f("name", Eq, Str("Ann".into()))),
            ("flag != true", f("flag", NotEq, Bool(true))),
            ("flag<>FALSE", f("flag", NotEq, Bool(false))),
            ("  a.b_c   >=   -7  ", f("a.b_c", GtEq, Int(-7))),
            ("v < 1e3", f("v", Lt, Float(1000.0))),
            ("v < -0.5", f("v", Lt, Float(-0.5))),
            ("s = 'it''s'", f("s", Eq, Str("it's".into()))),
            ("s = ''", f("s", Eq, Str(String::new()))),
            ("s = 'a b = c'", f("s", Eq, Str("a b = c".into()))),
            ("\"my col\" = 3", f("my col", Eq, Int(3))),
            ("\"a \"\"q\"\"\" = 3", f("a \"q\"", Eq, Int(3))),
            ("big > 99999999999999999999", f("big", Gt, Float(1e20))),
            ("x = 9223372036854775807", f("x", Eq, Int(i64::MAX))),
        ];
        for (text, want) in cases {
            let got = Filter::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(got, want, "{text}");
            assert_eq!(text.parse::<Filter>().unwrap(), want);
            // Display gives text that parses back to the same filter.
            assert_eq!(Filter::parse(&got.to_string()).unwrap(), want, "{got}");
        }
        let nan = Filter::parse("x > nan").unwrap();
        assert!(matches!(nan.value, Float(v) if v.is_nan()));
    }

    #[test]
    fn rejects_bad_filters_with_the_expression_and_what_was_expected() {
        let cases = [
            ("", "a column name"),
            ("x", "an operator"),
            ("x >", "a number, a 'quoted string', true or false"),
            ("> 5", "a column name"),
            ("x >> 5", "a number"),
            ("x = 'abc", "a closing '"),
            ("x = 5 6", "the end of the filter"),
            ("x = abc", "a number"),
            ("x ! 5", "an operator"),
            ("x = 1.2.3", "a number"),
            ("\"\" = 1", "a non-empty column name"),
        ];
        for (text, expected) in cases {
            let e = Filter::parse(text).unwrap_err();
            assert!(matches!(e, Error::InvalidConfig(_)), "{text}: {e:?}");
            let msg = e.to_string();
            assert!(msg.contains(&format!("\"{text}\"")), "{msg}");
            assert!(msg.contains(expected), "{text}: {msg}");
        }
    }

    #[test]
    fn check_names_unknown_columns_and_incomparable_types() {
        let schema = Schema::new(vec![
            Field::new("a", DataType::Int64, true),
            Field::new("s", DataType::Utf8, true),
            Field::new("t", DataType::Timestamp(TimeUnit::Millisecond, None), true),
            Field::new(
                "d",
                DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
                true,
            ),
            Field::new("day", DataType::Date32, true),
        ]);
        let e = Filter::parse("zz > 1").unwrap().check(&schema).unwrap_err();
        assert!(
            matches!(&e, Error::UnknownColumn { name, .. } if name == "zz"),
            "{e:?}"
        );
        let e = Filter::parse("a = 'x'")
            .unwrap()
            .check(&schema)
            .unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("'a'") && msg.contains("Int64"), "{msg}");
        let e = Filter::parse("s > 1").unwrap().check(&schema).unwrap_err();
        assert!(e.to_string().contains("Utf8"), "{e}");
        let e = Filter::parse("t > 1").unwrap().check(&schema).unwrap_err();
        assert!(e.to_string().contains("not supported"), "{e}");
        let e = Filter::parse("day > 'soon'")
            .unwrap()
            .check(&schema)
            .unwrap_err();
        assert!(e.to_string().contains("YYYY-MM-DD"), "{e}");
        for ok in [
            "a > 2.5",
            "a = 3",
            "s = 'x'",
            "d != 'y'",
            "day >= '2024-02-29'",
            "day < 19000",
        ] {
            Filter::parse(ok).unwrap().check(&schema).unwrap();
        }
        let batch = RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new(
                "t",
                DataType::Timestamp(TimeUnit::Millisecond, None),
                true,
            )])),
            vec![Arc::new(TimestampMillisecondArray::from(vec![1]))],
        )
        .unwrap();
        assert!(Filter::parse("t > 0").unwrap().evaluate(&batch).is_err());
    }

    /// How an integer value compares with a literal, by numeric value.
    fn cmp_int(x: i128, lit: &Literal) -> Ordering {
        match lit {
            Literal::Int(v) => x.cmp(&i128::from(*v)),
            Literal::Float(v) if v.is_nan() => (x as f64).total_cmp(v),
            Literal::Float(v) => (x as f64).partial_cmp(v).unwrap(),
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
    struct Data {
        batch: RecordBatch,
        ints: Vec<Option<i128>>,
        floats: Vec<Option<f64>>,
        strs: Vec<Option<String>>,
        bools: Vec<Option<bool>>,
    }

    fn random_data(seed: u64, n: usize) -> Data {
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
        let columns: Vec<(&str, ArrayRef)> = vec![
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
    fn random_filter<'a>(
        rng: &mut RowRng,
        d: &'a Data,
    ) -> (Filter, Box<dyn Fn(usize) -> bool + 'a>) {
        let op = OPS[rng.next_below(6) as usize];
        let column =
            ["i64", "i32", "u8", "u64", "f64", "s", "ds", "di", "b"][rng.next_below(9) as usize];
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
            _ => {
                let kind = rng.next_below(4);
                random_literal(rng, kind)
            }
        };
        let filter = Filter {
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
            let m = Filter::parse(text).unwrap().evaluate(&batch).unwrap();
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
        for seed in 0..12u64 {
            let d = random_data(seed, 400);
            let props = WriterProperties::builder()
                .set_max_row_group_row_count(Some(1 + (seed as usize % 5) * 17))
                .build();
            // Dictionary-encoded ints have no Parquet counterpart of their
            // own; leave that column out of the file.
            let schema = d.batch.schema();
            let keep: Vec<usize> = (0..schema.fields().len())
                .filter(|&i| schema.field(i).name() != "di")
                .collect();
            let batch = d.batch.project(&keep).unwrap();
            let mut buf = Vec::new();
            let mut w = ArrowWriter::try_new(&mut buf, batch.schema(), Some(props)).unwrap();
            w.write(&batch).unwrap();
            w.close().unwrap();
            let md = parquet::file::metadata::ParquetMetaDataReader::new()
                .parse_and_finish(&bytes::Bytes::from(buf))
                .unwrap();
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
                    if !filter.may_match_row_group(rg, leaf) {
                        pruned += 1;
                        let hit = (start..start + n).find(|&i| check(i));
                        assert!(hit.is_none(), "seed {seed}: {filter} pruned row {hit:?}");
                    }
                    start += n;
                }
            }
        }
        assert!(pruned > 100, "pruned only {pruned} row groups");
    }
}
