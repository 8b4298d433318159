//! TOML text to a checked [`Spec`], with the line and field of every error.

use std::ops::Range;

use arrow_schema::{DataType, Fields, TimeUnit};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::dist::{Alias, Zipf};
use crate::expr;
use crate::facts::{MAX_DECIMAL_PRECISION, MAX_DECIMAL256_PRECISION, MAX_LENGTH, MAX_NAME_BYTES};
use crate::model::class::Class;
use crate::model::expression::ETy;
use crate::model::query::{
    categories, category_values, depends_on, dictionary_values, kind_type, max_length,
};
use crate::model::{
    AggOp, Aggregate, Calendar, CalendarPart, ChildrenOf, Condition, CountCase, Dataset,
    Expression, Field, Generator, Kind, Pick, QualifiedField, Reference, Rows, Spec, SpecError,
    Table, Value, When, WordList, units_per_second,
};
use crate::template::Template;

/// `name` for an error message: whole when short, else its start.
fn shown(name: &str) -> String {
    if name.len() <= 40 {
        return name.to_string();
    }
    let mut end = 40;
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &name[..end])
}

const GENERATORS: &[&str] = &[
    "constant",
    "sequence",
    "uniform",
    "normal",
    "zipf",
    "weighted",
    "probability",
    "template",
    "words",
    "ref",
    "parent",
    "position",
    "uuid",
    "values_by_row",
    "calendar",
    "expr",
    "aggregate",
];
const COMMON: &[&str] = &[
    "name",
    "type",
    "null_rate",
    "nullable",
    "parquet_dictionary",
    "when",
    "description",
];
const TYPES: &str = "boolean, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, \
                     float64, decimal(P, S), utf8, large_utf8, binary, fixed_size_binary(N), \
                     dictionary, date32, timestamp(UNIT[, TZ]), time32(s|ms), time64(us|ns), \
                     duration(UNIT), struct, list, map";

/// Most bytes of a `fixed_size_binary(N)` value.
const MAX_FIXED_BYTES: i64 = 1 << 16;

enum TypeSpec {
    Scalar(DataType),
    Dictionary,
    Struct,
    List,
    Map,
}

fn parse_type(s: &str) -> Result<TypeSpec, String> {
    let t = s.trim().to_ascii_lowercase();
    let scalar = |d| Ok(TypeSpec::Scalar(d));
    match t.as_str() {
        "bool" | "boolean" => scalar(DataType::Boolean),
        "int8" => scalar(DataType::Int8),
        "int16" => scalar(DataType::Int16),
        "int32" => scalar(DataType::Int32),
        "int64" => scalar(DataType::Int64),
        "uint8" => scalar(DataType::UInt8),
        "uint16" => scalar(DataType::UInt16),
        "uint32" => scalar(DataType::UInt32),
        "uint64" => scalar(DataType::UInt64),
        "float32" | "float" => scalar(DataType::Float32),
        "float64" | "double" => scalar(DataType::Float64),
        "utf8" | "string" => scalar(DataType::Utf8),
        "large_utf8" | "large_string" => scalar(DataType::LargeUtf8),
        "binary" => scalar(DataType::Binary),
        "date32" | "date" => scalar(DataType::Date32),
        "dictionary" => Ok(TypeSpec::Dictionary),
        "struct" => Ok(TypeSpec::Struct),
        "list" => Ok(TypeSpec::List),
        "map" => Ok(TypeSpec::Map),
        _ if t.starts_with("decimal") => parse_decimal(s).map(TypeSpec::Scalar),
        _ if t.starts_with("time32(") || t.starts_with("time64(") || t.starts_with("duration(") => {
            let (kind, arg) = t.split_once('(').unwrap_or_default();
            let unit = arg.strip_suffix(')').map(str::trim);
            let unit = match unit {
                Some("s") => TimeUnit::Second,
                Some("ms") => TimeUnit::Millisecond,
                Some("us") => TimeUnit::Microsecond,
                Some("ns") => TimeUnit::Nanosecond,
                _ => {
                    return Err(format!(
                        "type `{s}`: the unit is s, ms, us or ns (time32 takes s or ms, time64 us or ns)"
                    ));
                }
            };
            match (kind, unit) {
                ("time32", TimeUnit::Second | TimeUnit::Millisecond) => {
                    scalar(DataType::Time32(unit))
                }
                ("time64", TimeUnit::Microsecond | TimeUnit::Nanosecond) => {
                    scalar(DataType::Time64(unit))
                }
                ("duration", _) => scalar(DataType::Duration(unit)),
                _ => Err(format!(
                    "type `{s}`: time32 takes s or ms, time64 us or ns (Arrow's time types)"
                )),
            }
        }
        _ if t.starts_with("fixed_size_binary(") => {
            let n = t["fixed_size_binary(".len()..]
                .strip_suffix(')')
                .and_then(|n| n.trim().parse::<i64>().ok());
            match n {
                Some(n) if (1..=MAX_FIXED_BYTES).contains(&n) => {
                    scalar(DataType::FixedSizeBinary(n as i32))
                }
                _ => Err(format!(
                    "type `{s}`: fixed_size_binary(N) takes a byte width N from 1 to {MAX_FIXED_BYTES}"
                )),
            }
        }
        _ => {
            if let Some(args) = t
                .strip_prefix("timestamp(")
                .and_then(|r| r.strip_suffix(')'))
            {
                let orig = s.trim();
                let raw_args = &orig["timestamp(".len()..orig.len() - 1];
                let mut it = raw_args.splitn(2, ',').map(str::trim);
                let unit = match it.next().map(|u| u.to_ascii_lowercase()) {
                    Some(u) if u == "s" => TimeUnit::Second,
                    Some(u) if u == "ms" => TimeUnit::Millisecond,
                    Some(u) if u == "us" => TimeUnit::Microsecond,
                    Some(u) if u == "ns" => TimeUnit::Nanosecond,
                    _ => {
                        return Err(format!(
                            "type `{s}`: the timestamp unit is s, ms, us or ns ({args})"
                        ));
                    }
                };
                let tz = it.next().filter(|z| !z.is_empty());
                // As Arrow reads it: an IANA name or a fixed offset.
                if let Some(z) = tz
                    && z.parse::<arrow_array::timezone::Tz>().is_err()
                {
                    return Err(format!(
                        "type `{s}`: unknown time zone `{z}`; give an IANA name such as Europe/Paris or UTC, or an offset such as +05:30"
                    ));
                }
                return scalar(DataType::Timestamp(unit, tz.map(Into::into)));
            }
            Err(format!("unknown type `{s}`; the types are {TYPES}"))
        }
    }
}

/// Checks that `g` draws values of exactly `width` bytes for a
/// `fixed_size_binary(width)` field (templates are checked as they are
/// drawn).
fn check_fixed(width: usize, g: &Generator) -> Result<(), String> {
    let values: Vec<&Value> = match g {
        Generator::Constant(v) => vec![v],
        Generator::Weighted { values, .. } => values.iter().collect(),
        Generator::Zipf {
            values: Some(values),
            ..
        } => values.iter().collect(),
        Generator::Uuid if width == 16 => vec![],
        Generator::Uuid => {
            return Err(format!(
                "`uuid` makes 16 bytes; declare the field fixed_size_binary(16), not ({width})"
            ));
        }
        Generator::Template(_) | Generator::Reference(_) => vec![],
        other => {
            return Err(format!(
                "fixed_size_binary({width}) takes constant, weighted or zipf values of {width} bytes, a template, uuid or a reference, not {other}"
            ));
        }
    };
    for v in values {
        if let Value::Str(s) = v
            && s.len() != width
        {
            return Err(format!(
                "value {s:?} has {} bytes; fixed_size_binary({width}) holds exactly {width}",
                s.len()
            ));
        }
    }
    Ok(())
}

/// The item field of a placeholder list or map type (see `copied` in
/// [`P::field`]): replaced by the referenced field's type.
fn placeholder_item() -> arrow_schema::FieldRef {
    std::sync::Arc::new(arrow_schema::Field::new("item", DataType::Null, true))
}

/// Whether `declared` is a placeholder (a dictionary, struct, list or map
/// declared to be copied) of the same kind as `actual`.
fn placeholder_of(declared: &DataType, actual: &DataType) -> bool {
    match (declared, actual) {
        (DataType::Null, DataType::Dictionary(..)) => true,
        (DataType::Struct(f), DataType::Struct(_)) => f.is_empty(),
        (DataType::List(i), DataType::List(_)) | (DataType::Map(i, _), DataType::Map(..)) => {
            *i.data_type() == DataType::Null && i.name() == "item"
        }
        _ => false,
    }
}

/// `decimal(P, S)` (or `decimal128(P, S)`): Arrow's `Decimal128(P, S)`, for
/// `1 <= P <= 38` and `0 <= S <= P`, and `Decimal256(P, S)` for `P` up to
/// 76.
fn parse_decimal(s: &str) -> Result<DataType, String> {
    let t = s.trim().to_ascii_lowercase();
    let usage = format!(
        "type `{s}`: a decimal type is `decimal(P, S)`, P digits (1 to {MAX_DECIMAL256_PRECISION}) of which S (0 to P) follow the point"
    );
    // `decimal128(P, S)` and `decimal256(P, S)` name the Arrow type;
    // `decimal(P, S)` takes the narrower that holds P digits.
    let (named, rest) = match (t.strip_prefix("decimal128"), t.strip_prefix("decimal256")) {
        (Some(r), _) => (Some(MAX_DECIMAL_PRECISION), Some(r)),
        (_, Some(r)) => (Some(MAX_DECIMAL256_PRECISION), Some(r)),
        _ => (None, t.strip_prefix("decimal")),
    };
    let Some(args) = rest
        .map(str::trim)
        .and_then(|r| r.strip_prefix('('))
        .and_then(|r| r.strip_suffix(')'))
    else {
        return Err(usage);
    };
    let parts: Vec<&str> = args.split(',').map(str::trim).collect();
    let [p, sc] = parts.as_slice() else {
        return Err(usage);
    };
    let (Ok(p), Ok(sc)) = (p.parse::<i64>(), sc.parse::<i64>()) else {
        return Err(usage);
    };
    if named == Some(MAX_DECIMAL_PRECISION) && p > i64::from(MAX_DECIMAL_PRECISION) {
        return Err(format!(
            "type `{s}`: precision {p} is more than {MAX_DECIMAL_PRECISION} digits (Decimal128); write decimal(P, S) for Decimal256 past 38"
        ));
    }
    if p > i64::from(MAX_DECIMAL256_PRECISION) {
        return Err(format!(
            "type `{s}`: precision {p} is more than {MAX_DECIMAL256_PRECISION} digits (Decimal256, the widest)"
        ));
    }
    if p < 1 {
        return Err(format!(
            "type `{s}`: the precision is 1 to {MAX_DECIMAL256_PRECISION} digits, not {p}"
        ));
    }
    if sc < 0 || sc > p {
        return Err(format!(
            "type `{s}`: the scale is 0 to the precision ({p}), not {sc}"
        ));
    }
    if p > i64::from(MAX_DECIMAL_PRECISION) || named == Some(MAX_DECIMAL256_PRECISION) {
        return Ok(DataType::Decimal256(p as u8, sc as i8));
    }
    Ok(DataType::Decimal128(p as u8, sc as i8))
}

/// Units of `10^-scale` of the decimal text `text` (`-12.5` at scale 2 is
/// -1250; an exponent as TOML floats have it, `1.5e3`), exactly; `None`
/// when it is not a decimal number, has digits below `10^-scale` (other
/// than zeros) or does not fit `i128`.
fn decimal_units(text: &str, scale: u8) -> Option<i128> {
    let t: String = text.trim().chars().filter(|c| *c != '_').collect();
    let (neg, rest) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(&t)),
    };
    let (mantissa, exp) = match rest.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i32>().ok()?),
        None => (rest, 0),
    };
    let (whole, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if whole.is_empty() && frac.is_empty()
        || !whole.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    // The digits, and how many of them lie below the point.
    let digits: Vec<u8> = whole
        .bytes()
        .chain(frac.bytes())
        .map(|b| b - b'0')
        .collect();
    let below = i64::try_from(frac.len()).ok()? - i64::from(exp);
    // Trailing zeros below the scale are no digits.
    let significant = digits.iter().rposition(|&d| d != 0).map_or(0, |i| i + 1);
    let zeros = (digits.len() - significant) as i64;
    if below - zeros.min(below.max(0)) > i64::from(scale) {
        return None;
    }
    let mut units: i128 = 0;
    for &d in &digits {
        units = units.checked_mul(10)?.checked_add(i128::from(d))?;
    }
    let shift = i64::from(scale) - below;
    units = if shift >= 0 {
        units.checked_mul(10i128.checked_pow(u32::try_from(shift).ok()?)?)?
    } else {
        units / 10i128.checked_pow(u32::try_from(-shift).ok()?)?
    };
    Some(if neg { -units } else { units })
}

struct P<'s> {
    origin: &'s str,
    /// Byte offsets of the text's newlines, for line numbers in
    /// `O(log n)` (a spec of many thousand fields asks for thousands).
    newlines: Vec<usize>,
}

type Sp<'i> = Spanned<DeValue<'i>>;

fn get<'a, 'i>(t: &'a DeTable<'i>, key: &str) -> Option<&'a Sp<'i>> {
    t.iter().find(|(k, _)| k.get_ref() == key).map(|(_, v)| v)
}

fn kind_name(v: &DeValue<'_>) -> &'static str {
    match v {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a date-time",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

impl<'s> P<'s> {
    fn line(&self, offset: usize) -> usize {
        self.newlines.partition_point(|&n| n < offset) + 1
    }

    fn err(
        &self,
        span: Range<usize>,
        field: Option<&str>,
        message: impl Into<String>,
    ) -> SpecError {
        SpecError {
            origin: self.origin.to_string(),
            line: self.line(span.start),
            column: None,
            field: field.map(str::to_string),
            message: message.into(),
        }
    }

    /// An error at a known line.
    fn err_at(&self, line: usize, field: Option<&str>, message: impl Into<String>) -> SpecError {
        SpecError {
            origin: self.origin.to_string(),
            line,
            column: None,
            field: field.map(str::to_string),
            message: message.into(),
        }
    }

    fn check_keys(
        &self,
        t: &DeTable<'_>,
        allowed: &[&str],
        field: Option<&str>,
        what: &str,
    ) -> Result<(), SpecError> {
        for (k, _) in t.iter() {
            if !allowed.contains(&k.get_ref().as_ref()) {
                return Err(self.err(
                    k.span(),
                    field,
                    format!(
                        "unknown key `{}` in {what}; expected one of: {}",
                        k.get_ref(),
                        allowed.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    fn table<'a, 'i>(
        &self,
        v: &'a Sp<'i>,
        field: Option<&str>,
        what: &str,
    ) -> Result<&'a DeTable<'i>, SpecError> {
        match v.get_ref() {
            DeValue::Table(t) => Ok(t),
            other => Err(self.err(
                v.span(),
                field,
                format!("{what} must be a table, not {}", kind_name(other)),
            )),
        }
    }

    fn string(&self, v: &Sp<'_>, field: Option<&str>, key: &str) -> Result<String, SpecError> {
        match v.get_ref() {
            DeValue::String(s) => Ok(s.to_string()),
            other => Err(self.err(
                v.span(),
                field,
                format!("`{key}` must be a string, not {}", kind_name(other)),
            )),
        }
    }

    fn boolean(&self, v: &Sp<'_>, field: Option<&str>, key: &str) -> Result<bool, SpecError> {
        match v.get_ref() {
            DeValue::Boolean(b) => Ok(*b),
            other => Err(self.err(
                v.span(),
                field,
                format!("`{key}` must be true or false, not {}", kind_name(other)),
            )),
        }
    }

    fn number(&self, v: &Sp<'_>, field: Option<&str>, key: &str) -> Result<f64, SpecError> {
        let bad = |what: &str| {
            self.err(
                v.span(),
                field,
                format!("`{key}` must be a number, not {what}"),
            )
        };
        match v.get_ref() {
            DeValue::Integer(i) => int_of(i.as_str(), i.radix())
                .map(|i| i as f64)
                .ok_or_else(|| bad("an integer this large")),
            DeValue::Float(f) => {
                let x: f64 = float_of(f.as_str()).ok_or_else(|| bad("this float"))?;
                Ok(x)
            }
            other => Err(bad(kind_name(other))),
        }
    }

    fn integer(&self, v: &Sp<'_>, field: Option<&str>, key: &str) -> Result<i128, SpecError> {
        match v.get_ref() {
            DeValue::Integer(i) => int_of(i.as_str(), i.radix())
                .ok_or_else(|| self.err(v.span(), field, format!("`{key}`: integer out of range"))),
            other => Err(self.err(
                v.span(),
                field,
                format!("`{key}` must be an integer, not {}", kind_name(other)),
            )),
        }
    }

    fn rate(&self, v: &Sp<'_>, field: Option<&str>, key: &str) -> Result<f64, SpecError> {
        let r = self.number(v, field, key)?;
        if !(0.0..=1.0).contains(&r) {
            return Err(self.err(
                v.span(),
                field,
                format!("`{key}` must be between 0 and 1, not {r}"),
            ));
        }
        Ok(r)
    }

    /// A spec value as `class`, dates and timestamps checked against the
    /// range of their Arrow type (i32 days, i64 units).
    fn value(
        &self,
        v: &Sp<'_>,
        class: Class,
        field: Option<&str>,
        key: &str,
    ) -> Result<Value, SpecError> {
        let value = self.value_raw(v, class, field, key)?;
        let range = match class {
            Class::Date => Some((i128::from(i32::MIN), i128::from(i32::MAX), "date32")),
            Class::Timestamp(_) => Some((i128::from(i64::MIN), i128::from(i64::MAX), "timestamp")),
            Class::Time(u) => Some((0, units_per_second(u) * 86_400 - 1, "time of day")),
            Class::Decimal { max, .. } => Some((-max, max, "decimal (in units of its scale)")),
            _ => None,
        };
        if let (Some((lo, hi, ty)), Value::Int(i)) = (range, &value)
            && !(lo..=hi).contains(i)
        {
            return Err(self.err(
                v.span(),
                field,
                format!("`{key}` = {i} is outside the {ty} range {lo}..={hi}"),
            ));
        }
        Ok(value)
    }

    fn value_raw(
        &self,
        v: &Sp<'_>,
        class: Class,
        field: Option<&str>,
        key: &str,
    ) -> Result<Value, SpecError> {
        let bad = |msg: String| self.err(v.span(), field, msg);
        let wrong = || {
            bad(format!(
                "`{key}` must be {}, not {}",
                class.describe(),
                kind_name(v.get_ref())
            ))
        };
        match (class, v.get_ref()) {
            (Class::Bool, DeValue::Boolean(b)) => Ok(Value::Bool(*b)),
            (Class::Int { min, max }, DeValue::Integer(_)) => {
                let i = self.integer(v, field, key)?;
                if i < min || i > max {
                    return Err(bad(format!(
                        "`{key}` = {i} is outside the type's range {min}..={max}"
                    )));
                }
                Ok(Value::Int(i))
            }
            (Class::Float, DeValue::Integer(_) | DeValue::Float(_)) => {
                Ok(Value::Float(self.number(v, field, key)?))
            }
            (Class::Str | Class::Dict, DeValue::String(s)) => Ok(Value::Str(s.to_string())),
            (Class::Date | Class::Timestamp(_) | Class::Time(_), DeValue::Integer(_)) => {
                Ok(Value::Int(self.integer(v, field, key)?))
            }
            (Class::Decimal { scale, .. }, DeValue::Integer(i)) => {
                let units = self.integer(v, field, key)?;
                let text = if i.radix() == 10 {
                    i.as_str().to_string()
                } else {
                    units.to_string()
                };
                decimal_units(&text, scale)
                    .map(Value::Int)
                    .ok_or_else(|| bad(format!("`{key}` = {text} is too large for a decimal")))
            }
            (Class::Decimal { scale, .. }, DeValue::Float(x)) => decimal_units(x.as_str(), scale)
                .map(Value::Int)
                .ok_or_else(|| {
                    bad(format!(
                        "`{key}` = {} is not a decimal of at most {scale} digits after the point",
                        x.as_str()
                    ))
                }),
            (Class::Decimal { scale, .. }, DeValue::String(x)) => {
                decimal_units(x, scale).map(Value::Int).ok_or_else(|| {
                    bad(format!(
                        "`{key}` = {x:?} is not a decimal of at most {scale} digits after the point"
                    ))
                })
            }
            (Class::Date, DeValue::String(s)) => parse_date(s)
                .map(Value::Int)
                .ok_or_else(|| bad(format!("`{key}`: `{s}` is not a date like 2024-01-31"))),
            (Class::Date, DeValue::Datetime(d)) => match (d.date, d.time) {
                (Some(date), None) => Ok(Value::Int(days_from_civil(
                    date.year.into(),
                    date.month.into(),
                    date.day.into(),
                ))),
                _ => Err(bad(format!("`{key}` must be a date without a time"))),
            },
            (Class::Time(unit), DeValue::Datetime(d)) => match (d.date, d.time, d.offset) {
                (None, Some(t), None) => {
                    let per = units_per_second(unit);
                    let secs = i128::from(t.hour) * 3600
                        + i128::from(t.minute) * 60
                        + i128::from(t.second);
                    Ok(Value::Int(
                        secs * per + i128::from(t.nanosecond) * per / 1_000_000_000,
                    ))
                }
                _ => Err(bad(format!(
                    "`{key}` must be a time of day without a date, such as 08:30:00"
                ))),
            },
            (Class::Timestamp(unit), DeValue::Datetime(d)) => {
                let Some(date) = d.date else {
                    return Err(bad(format!("`{key}` needs a date")));
                };
                let days = days_from_civil(date.year.into(), date.month.into(), date.day.into());
                let (mut secs, mut nanos) = (days * 86_400, 0i128);
                if let Some(t) = d.time {
                    secs += i128::from(t.hour) * 3600
                        + i128::from(t.minute) * 60
                        + i128::from(t.second);
                    nanos = t.nanosecond.into();
                }
                if let Some(toml::value::Offset::Custom { minutes }) = d.offset {
                    secs -= i128::from(minutes) * 60;
                }
                let per = match unit {
                    TimeUnit::Second => 1,
                    TimeUnit::Millisecond => 1_000,
                    TimeUnit::Microsecond => 1_000_000,
                    TimeUnit::Nanosecond => 1_000_000_000,
                };
                Ok(Value::Int(secs * per + nanos * per / 1_000_000_000))
            }
            _ => Err(wrong()),
        }
    }

    fn values(
        &self,
        v: &Sp<'_>,
        class: Class,
        field: Option<&str>,
        key: &str,
    ) -> Result<Vec<Value>, SpecError> {
        let DeValue::Array(items) = v.get_ref() else {
            return Err(self.err(
                v.span(),
                field,
                format!("`{key}` must be an array, not {}", kind_name(v.get_ref())),
            ));
        };
        if items.is_empty() {
            return Err(self.err(v.span(), field, format!("`{key}` is empty")));
        }
        items
            .iter()
            .map(|item| self.value(item, class, field, key))
            .collect()
    }

    /// The one generator key of table `t`, if any.
    fn generator<'i>(
        &self,
        t: &DeTable<'i>,
        class: Class,
        field: Option<&str>,
        at: Range<usize>,
    ) -> Result<Option<Generator>, SpecError> {
        let present: Vec<_> = t
            .iter()
            .filter(|(k, _)| GENERATORS.contains(&k.get_ref().as_ref()))
            .collect();
        let (key, v) = match present.as_slice() {
            [] => return Ok(None),
            [one] => *one,
            [a, b, ..] => {
                return Err(self.err(
                    b.0.span(),
                    field,
                    format!(
                        "has both `{}` and `{}`; give one generator",
                        a.0.get_ref(),
                        b.0.get_ref()
                    ),
                ));
            }
        };
        let _ = at;
        let name = key.get_ref().as_ref();
        let span = v.span();
        let bad = |msg: String| self.err(span.clone(), field, msg);
        let unsupported = || {
            bad(format!(
                "`{name}` does not generate {} values",
                match class {
                    Class::Bool => "boolean",
                    Class::Int { .. } => "integer",
                    Class::Float => "float",
                    Class::Str => "string",
                    Class::Dict => "dictionary",
                    Class::Date => "date",
                    Class::Timestamp(_) => "timestamp",
                    Class::Time(_) => "time",
                    Class::Decimal { .. } => "decimal",
                }
            ))
        };
        let params = |allowed: &[&str]| -> Result<&DeTable<'i>, SpecError> {
            let p = self.table(v, field, &format!("`{name}`"))?;
            self.check_keys(p, allowed, field, &format!("`{name}`"))?;
            Ok(p)
        };
        let required = |p: &DeTable<'i>, k: &str| -> Result<Sp<'i>, SpecError> {
            get(p, k)
                .cloned()
                .ok_or_else(|| bad(format!("`{name}` needs `{k}`")))
        };
        let g = match name {
            "constant" => Generator::Constant(self.value(v, class, field, name)?),
            "sequence" => {
                if !class.numeric() {
                    return Err(unsupported());
                }
                let p = params(&["start", "step", "per_parent"])?;
                let per_parent = get(p, "per_parent")
                    .map(|b| self.boolean(b, field, "per_parent"))
                    .transpose()?
                    .unwrap_or(false);
                if per_parent {
                    // Numbered within each parent row: the row's position
                    // among its parent's children, from `start`.
                    let Class::Int { min, max } = class else {
                        return Err(bad(
                            "a `per_parent` sequence numbers rows with integers".into()
                        ));
                    };
                    if let Some(st) = get(p, "step") {
                        return Err(self.err(
                            st.span(),
                            field,
                            "a `per_parent` sequence steps by 1 (`step` is for plain sequences)",
                        ));
                    }
                    let start = match get(p, "start") {
                        Some(st) => self.integer(st, field, "start")?,
                        None => 1,
                    };
                    if start < min || start > max {
                        return Err(bad(format!(
                            "the sequence starts at {start}, outside the type's range {min}..={max}"
                        )));
                    }
                    return Ok(Some(Generator::Position(start)));
                }
                let step_class = match class {
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
                };
                let start = match get(p, "start") {
                    Some(s) => self.value(s, class, field, "start")?,
                    None if class == Class::Float => Value::Float(0.0),
                    None => Value::Int(match class {
                        Class::Int { min, max } => 0i128.clamp(min, max),
                        _ => 0,
                    }),
                };
                let step = match get(p, "step") {
                    Some(s) => self.value(s, step_class, field, "step")?,
                    None if class == Class::Float => Value::Float(1.0),
                    None => Value::Int(1),
                };
                Generator::Sequence { start, step }
            }
            "uniform" => {
                if !class.numeric() {
                    return Err(unsupported());
                }
                let p = params(&["min", "max"])?;
                let min = self.value(&required(p, "min")?, class, field, "min")?;
                let max = self.value(&required(p, "max")?, class, field, "max")?;
                let ok = match (&min, &max) {
                    (Value::Int(a), Value::Int(b)) => a <= b,
                    (Value::Float(a), Value::Float(b)) => a < b && (b - a).is_finite(),
                    _ => false,
                };
                if !ok {
                    return Err(bad(format!(
                        "uniform needs min below max, not {min} and {max}"
                    )));
                }
                Generator::Uniform { min, max }
            }
            "normal" => {
                if !matches!(
                    class,
                    Class::Int { .. } | Class::Float | Class::Decimal { .. }
                ) {
                    return Err(unsupported());
                }
                let p = params(&["mean", "std", "min", "max"])?;
                let mean = self.number(&required(p, "mean")?, field, "mean")?;
                let std = self.number(&required(p, "std")?, field, "std")?;
                if !(std > 0.0 && std.is_finite()) {
                    return Err(bad(format!(
                        "normal needs a positive standard deviation, not {std}"
                    )));
                }
                if !mean.is_finite() {
                    return Err(bad(format!("normal needs a finite mean, not {mean}")));
                }
                let min = get(p, "min")
                    .map(|m| self.number(m, field, "min"))
                    .transpose()?;
                let max = get(p, "max")
                    .map(|m| self.number(m, field, "max"))
                    .transpose()?;
                for (k, v) in [("min", min), ("max", max)] {
                    if let Some(v) = v
                        && !v.is_finite()
                    {
                        return Err(bad(format!("normal needs a finite `{k}`, not {v}")));
                    }
                }
                if let (Some(a), Some(b)) = (min, max)
                    && a > b
                {
                    return Err(bad(format!("normal needs min <= max, not {a} and {b}")));
                }
                if let Class::Int {
                    min: tmin,
                    max: tmax,
                } = class
                {
                    let lo = min.unwrap_or(f64::NEG_INFINITY).max(tmin as f64);
                    let hi = max.unwrap_or(f64::INFINITY).min(tmax as f64);
                    if lo.ceil() > hi.floor() {
                        return Err(bad(format!(
                            "normal's min and max leave no value in the type's range {tmin}..={tmax}"
                        )));
                    }
                }
                if let Class::Decimal { scale, max: most } = class {
                    // Clamps in units of the scale, as the engine draws.
                    let unit = class.unit();
                    let top = most as f64;
                    let lo = min.map_or(-top, |m| (m * unit).max(-top));
                    let hi = max.map_or(top, |m| (m * unit).min(top));
                    if lo.ceil() > hi.floor() || !(mean * unit).is_finite() {
                        return Err(bad(format!(
                            "normal's min and max leave no value in the decimal's range (at most {most} units of 10^-{scale})"
                        )));
                    }
                }
                Generator::Normal {
                    mean,
                    std,
                    min,
                    max,
                }
            }
            "zipf" => {
                if class == Class::Bool {
                    return Err(unsupported());
                }
                let p = params(&["s", "n", "values", "start"])?;
                let s = self.number(&required(p, "s")?, field, "s")?;
                let values = get(p, "values")
                    .map(|vs| self.values(vs, class, field, "values"))
                    .transpose()?;
                let n = match (get(p, "n"), &values) {
                    (Some(n), vals) => {
                        let n = self.integer(n, field, "n")?;
                        if n < 1 {
                            return Err(bad(format!(
                                "zipf needs at least one rank (n >= 1), not {n}"
                            )));
                        }
                        if let Some(vals) = vals
                            && vals.len() as i128 != n
                        {
                            return Err(bad(format!("zipf has n = {n} but {} values", vals.len())));
                        }
                        n.min(u64::MAX.into()) as u64
                    }
                    (None, Some(vals)) => vals.len() as u64,
                    (None, None) => return Err(bad("zipf needs `n` or `values`".into())),
                };
                Zipf::check(s, n).map_err(|e| bad(distribution_message(e)))?;
                let start = match (get(p, "start"), &values, class) {
                    (Some(_), Some(_), _) => {
                        return Err(bad("zipf takes `values` or `start`, not both".into()));
                    }
                    (Some(st), None, Class::Int { .. }) => self.integer(st, field, "start")?,
                    (None, None, Class::Int { .. }) => 1,
                    (_, Some(_), _) => 1,
                    (_, None, _) => {
                        return Err(bad(format!(
                            "zipf over {} values needs `values` (most frequent first)",
                            class.describe()
                        )));
                    }
                };
                if let Class::Int { min, max } = class
                    && values.is_none()
                    && (start < min || start > max || start + i128::from(n) - 1 > max)
                {
                    return Err(bad(format!(
                        "zipf ranks from {start} ({n} of them) do not fit the type's range {min}..={max}"
                    )));
                }
                Generator::Zipf {
                    s,
                    n,
                    values,
                    start,
                }
            }
            "weighted" => {
                let p = params(&["values", "weights"])?;
                let values = self.values(&required(p, "values")?, class, field, "values")?;
                let weights = match get(p, "weights") {
                    None => vec![1.0; values.len()],
                    Some(w) => {
                        let DeValue::Array(items) = w.get_ref() else {
                            return Err(self.err(
                                w.span(),
                                field,
                                "`weights` must be an array of numbers",
                            ));
                        };
                        let ws = items
                            .iter()
                            .map(|x| self.number(x, field, "weights"))
                            .collect::<Result<Vec<_>, _>>()?;
                        if ws.len() != values.len() {
                            return Err(self.err(
                                w.span(),
                                field,
                                format!(
                                    "weighted has {} values but {} weights",
                                    values.len(),
                                    ws.len()
                                ),
                            ));
                        }
                        if let Some(neg) = ws.iter().find(|x| **x < 0.0 || !x.is_finite()) {
                            return Err(self.err(
                                w.span(),
                                field,
                                format!("weights must be non-negative numbers, not {neg}"),
                            ));
                        }
                        ws
                    }
                };
                Alias::check(&weights)
                    .map_err(|e| bad(format!("weighted {}", distribution_message(e))))?;
                Generator::Weighted { values, weights }
            }
            "probability" => {
                if class != Class::Bool {
                    return Err(unsupported());
                }
                Generator::Probability(self.rate(v, field, name)?)
            }
            "template" => {
                if class != Class::Str {
                    return Err(unsupported());
                }
                let s = self.string(v, field, name)?;
                Generator::Template(Template::parse(&s).map_err(bad)?)
            }
            "words" => {
                if class != Class::Str {
                    return Err(unsupported());
                }
                let p = params(&["list", "min", "max"])?;
                let list = match get(p, "list") {
                    None => WordList::Words,
                    Some(l) => match self.string(l, field, "list")?.as_str() {
                        "words" => WordList::Words,
                        "first_names" => WordList::FirstNames,
                        "last_names" => WordList::LastNames,
                        other => {
                            return Err(self.err(
                                l.span(),
                                field,
                                format!(
                                    "unknown word list `{other}`; the lists are words, first_names, last_names"
                                ),
                            ));
                        }
                    },
                };
                let min = get(p, "min")
                    .map(|m| self.integer(m, field, "min"))
                    .transpose()?
                    .unwrap_or(1);
                let max = get(p, "max")
                    .map(|m| self.integer(m, field, "max"))
                    .transpose()?
                    .unwrap_or(min);
                if min < 0 || max < min || max > 1000 {
                    return Err(bad(format!(
                        "words needs 0 <= min <= max <= 1000, not min {min} and max {max}"
                    )));
                }
                Generator::Words {
                    list,
                    min: min as u32,
                    max: max as u32,
                }
            }
            "ref" => {
                if class == Class::Dict {
                    return Err(bad(
                        "a `ref` copies a field of another table: declare this field with that field's type (a `dictionary` field cannot hold a copy)".into(),
                    ));
                }
                let p = params(&["table", "field", "zipf", "weight", "via", "draw", "offset"])?;
                let table = self.string(&required(p, "table")?, field, "table")?;
                let target = self.string(&required(p, "field")?, field, "field")?;
                let pick = match (get(p, "zipf"), get(p, "weight")) {
                    (Some(_), Some(w)) => {
                        return Err(self.err(
                            w.span(),
                            field,
                            "`ref` takes `zipf` or `weight`, not both",
                        ));
                    }
                    (None, Some(w)) => Pick::Weighted {
                        field: self.string(w, field, "weight")?,
                    },
                    (None, None) => Pick::Uniform,
                    (Some(z), None) => {
                        let zt = self.table(z, field, "`ref`'s `zipf`")?;
                        self.check_keys(zt, &["s"], field, "`ref`'s `zipf`")?;
                        let s = match get(zt, "s") {
                            Some(s) => self.number(s, field, "s")?,
                            None => return Err(bad("`ref`'s `zipf` needs `s`".into())),
                        };
                        Zipf::check(s, 1).map_err(|e| bad(distribution_message(e)))?;
                        Pick::Zipf { s }
                    }
                };
                let via = get(p, "via")
                    .map(|v| self.string(v, field, "via"))
                    .transpose()?;
                if via.is_some() && pick != Pick::Uniform {
                    return Err(bad(
                        "`ref` takes `via` (the row of a sibling's reference) or `zipf`/`weight`, not both"
                            .into(),
                    ));
                }
                let draw = get(p, "draw")
                    .map(|v| self.string(v, field, "draw"))
                    .transpose()?;
                if via.is_some() && draw.is_some() {
                    return Err(bad(
                        "`ref` takes `via` (the row of a sibling's reference) or `draw` (a name for the row it draws), not both"
                            .into(),
                    ));
                }
                if let Some(d) = &draw
                    && (d == "parent" || !is_plain_name(d))
                {
                    return Err(bad(format!(
                        "`draw` = \"{d}\": a draw name is a plain name (letters, digits, `_`), and not `parent`"
                    )));
                }
                let offset = self.offset(p, class, field)?;
                Generator::Reference(Reference {
                    table,
                    field: target,
                    pick,
                    via,
                    draw,
                    offset,
                })
            }
            "parent" => {
                if class == Class::Dict {
                    return Err(bad(
                        "`parent` copies a field of the parent row: declare this field with that field's type (a `dictionary` field cannot hold a copy)".into(),
                    ));
                }
                let (target, offset) = match v.get_ref() {
                    DeValue::String(_) => (self.string(v, field, name)?, None),
                    _ => {
                        let p = params(&["field", "offset"])?;
                        let target = self.string(&required(p, "field")?, field, "field")?;
                        (target, self.offset(p, class, field)?)
                    }
                };
                // The table is filled in from the table's `children_of`.
                Generator::Reference(Reference {
                    table: String::new(),
                    field: target,
                    pick: Pick::Parent,
                    via: None,
                    draw: None,
                    offset,
                })
            }
            "uuid" => {
                if class != Class::Str {
                    return Err(unsupported());
                }
                if !self.boolean(v, field, name)? {
                    return Err(bad("`uuid` takes `true` (or leave it out)".into()));
                }
                Generator::Uuid
            }
            "position" => {
                let Class::Int { min, max } = class else {
                    return Err(unsupported());
                };
                let start = self.integer(v, field, name)?;
                if start < min || start > max {
                    return Err(bad(format!(
                        "position starts at {start}, outside the type's range {min}..={max}"
                    )));
                }
                Generator::Position(start)
            }
            "aggregate" => {
                // `{ table = "lineitem", sum = "l_price" }`; the table and
                // field are checked with the dataset (`check_aggregates`).
                let names: Vec<&str> = AggOp::ALL.iter().map(|(n, _)| *n).collect();
                let mut keys = vec!["table"];
                keys.extend(&names);
                let p = params(&keys)?;
                let table = self.string(&required(p, "table")?, field, "table")?;
                let ops: Vec<_> = AggOp::ALL
                    .iter()
                    .filter_map(|(n, op)| get(p, n).map(|v| (*op, v)))
                    .collect();
                let [(op, v)] = ops.as_slice() else {
                    return Err(bad(format!(
                        "`aggregate` takes one of {} (the child field it aggregates)",
                        names.join(", ")
                    )));
                };
                let target = self.string(v, field, op.as_str())?;
                let field_name = if target == "*" {
                    if *op != AggOp::Count {
                        return Err(bad(format!("`{}` needs a field, not `*`", op.as_str())));
                    }
                    None
                } else {
                    Some(target)
                };
                Generator::Aggregate(Aggregate {
                    table,
                    op: *op,
                    field: field_name,
                })
            }
            "expr" => {
                // Checked against the siblings once they are all parsed
                // (`resolve_expressions`).
                let source = self.string(v, field, name)?;
                Generator::Expr(Box::new(Expression::pending(source)))
            }
            "values_by_row" => {
                // A list, or `{ values = [...], cycle = true }`.
                let (list, cycle) = match v.get_ref() {
                    DeValue::Table(_) => {
                        let p = params(&["values", "cycle"])?;
                        let cycle = get(p, "cycle")
                            .map(|c| self.boolean(c, field, "cycle"))
                            .transpose()?
                            .unwrap_or(false);
                        (required(p, "values")?, cycle)
                    }
                    _ => (v.clone(), false),
                };
                let values = self.values(&list, class, field, name)?;
                Generator::ByRow { values, cycle }
            }
            "calendar" => {
                let s = self.string(v, field, name)?;
                let Some((_, part)) = CalendarPart::ALL.iter().find(|(n, _)| *n == s) else {
                    return Err(bad(format!(
                        "unknown calendar part `{s}`; the parts are {}",
                        CalendarPart::ALL.map(|(n, _)| n).join(", ")
                    )));
                };
                let fits = match part {
                    CalendarPart::Date => class == Class::Date,
                    CalendarPart::DayName | CalendarPart::MonthName => {
                        matches!(class, Class::Str | Class::Dict)
                    }
                    CalendarPart::Weekend => class == Class::Bool,
                    CalendarPart::DateKey => {
                        matches!(class, Class::Int { min, max } if min <= 10_000_101 && max >= 99_991_231)
                    }
                    CalendarPart::Year => {
                        matches!(class, Class::Int { min, max } if min <= -9999 && max >= 9999)
                    }
                    // The rest are small: the largest value each takes.
                    _ => {
                        let most = match part {
                            CalendarPart::Quarter => 4,
                            CalendarPart::Month => 12,
                            CalendarPart::DayOfMonth => 31,
                            CalendarPart::DayOfWeek => 7,
                            CalendarPart::WeekOfYear => 53,
                            _ => 366,
                        };
                        matches!(class, Class::Int { max, .. } if max >= most)
                    }
                };
                if !fits {
                    return Err(bad(format!(
                        "calendar part `{s}` needs {}",
                        match part {
                            CalendarPart::Date => "a date32 field",
                            CalendarPart::DayName | CalendarPart::MonthName =>
                                "a string or dictionary field",
                            CalendarPart::Weekend => "a boolean field",
                            CalendarPart::DateKey => "an integer field of 32 bits or more",
                            CalendarPart::Year => "a signed integer field of 16 bits or more",
                            CalendarPart::DayOfYear => "an integer field of 16 bits or more",
                            _ => "an integer field",
                        }
                    )));
                }
                Generator::Calendar(*part)
            }
            _ => unreachable!("listed in GENERATORS"),
        };
        Ok(Some(g))
    }

    /// The `offset` of a reference's parameters `p`: an integer generator
    /// in the field's units (days of dates, units of timestamps and
    /// decimals), for fields of those types only.
    fn offset(
        &self,
        p: &DeTable<'_>,
        class: Class,
        field: Option<&str>,
    ) -> Result<Option<Box<Generator>>, SpecError> {
        let Some(o) = get(p, "offset") else {
            return Ok(None);
        };
        if !matches!(
            class,
            Class::Int { .. }
                | Class::Date
                | Class::Timestamp(_)
                | Class::Time(_)
                | Class::Decimal { .. }
        ) {
            return Err(self.err(
                o.span(),
                field,
                "`offset` adds to integers, dates, timestamps and decimals, not to this field's type",
            ));
        }
        let units = Class::Int {
            min: i64::MIN.into(),
            max: i64::MAX.into(),
        };
        if let DeValue::Integer(_) = o.get_ref() {
            return Ok(Some(Box::new(Generator::Constant(
                self.value(o, units, field, "offset")?,
            ))));
        }
        let ot = self.table(o, field, "`offset`")?;
        self.check_keys(
            ot,
            &["constant", "uniform", "normal", "zipf", "weighted"],
            field,
            "`offset`",
        )?;
        let g = self
            .generator(ot, units, field, o.span())?
            .ok_or_else(|| self.err(o.span(), field, "`offset` needs a generator"))?;
        Ok(Some(Box::new(g)))
    }

    fn field<'i>(
        &self,
        v: &Sp<'i>,
        parent: &str,
        default_name: Option<&str>,
    ) -> Result<(Field, Vec<Sp<'i>>), SpecError> {
        let t = self.table(v, None, "a field")?;
        let line = self.line(v.span().start);
        let name = match (get(t, "name"), default_name) {
            (Some(n), _) => self.string(n, None, "name")?,
            (None, Some(d)) => d.to_string(),
            (None, None) => return Err(self.err(v.span(), None, "a field needs a `name`")),
        };
        if name.len() > MAX_NAME_BYTES {
            let path = format!(
                "{parent}{}{}",
                if parent.is_empty() { "" } else { "." },
                shown(&name)
            );
            return Err(self.err(
                v.span(),
                Some(&path),
                format!(
                    "the name is {} bytes long; names are at most {MAX_NAME_BYTES}",
                    name.len()
                ),
            ));
        }
        let path = if parent.is_empty() {
            name.clone()
        } else {
            format!("{parent}.{name}")
        };
        let f = Some(path.as_str());
        if name.is_empty() {
            return Err(self.err(v.span(), f, "the name is empty"));
        }
        if name.contains('.') {
            return Err(self.err(
                v.span(),
                f,
                "a field name cannot contain `.` (dotted paths name nested fields)",
            ));
        }
        let Some(ty) = get(t, "type") else {
            return Err(self.err(v.span(), f, format!("needs a `type`: one of {TYPES}")));
        };
        let ty_text = self.string(ty, f, "type")?;
        let ty_spec = parse_type(&ty_text).map_err(|m| self.err(ty.span(), f, m))?;
        let null_rate = get(t, "null_rate")
            .map(|r| self.rate(r, f, "null_rate"))
            .transpose()?
            .unwrap_or(0.0);
        let parquet_dictionary = get(t, "parquet_dictionary")
            .map(|d| self.boolean(d, f, "parquet_dictionary"))
            .transpose()?;
        let mut allowed: Vec<&str> = COMMON.to_vec();
        let mut empty_as_null = false;
        // A dictionary, struct, list or map copied by a `ref` (or
        // `parent`): its Arrow type is the referenced field's, filled in
        // when the dataset is resolved; until then a placeholder of its
        // kind.
        let copied = match &ty_spec {
            TypeSpec::Dictionary => Some(DataType::Null),
            TypeSpec::Struct => Some(DataType::Struct(Fields::empty())),
            TypeSpec::List => Some(DataType::List(placeholder_item())),
            TypeSpec::Map => Some(DataType::Map(placeholder_item(), false)),
            TypeSpec::Scalar(_) => None,
        };
        let copying = get(t, "ref").or(get(t, "parent"));
        let kind = match (ty_spec, copied, copying) {
            (_, Some(placeholder), Some(_)) => {
                allowed.extend(["ref", "parent"]);
                self.check_keys(t, &allowed, f, "a field copied by a reference")?;
                let generator = self
                    .generator(t, Class::Str, f, v.span())?
                    .ok_or_else(|| self.err(v.span(), f, "needs a `ref`"))?;
                if let Generator::Reference(r) = &generator
                    && r.offset.is_some()
                {
                    return Err(self.err(
                        v.span(),
                        f,
                        "`offset` adds to integers, dates, timestamps and decimals, not to this field's type",
                    ));
                }
                Kind::Scalar {
                    data_type: placeholder,
                    generator,
                }
            }
            (ty_spec, _, _) => match ty_spec {
                TypeSpec::Scalar(_) | TypeSpec::Dictionary => {
                    allowed.extend(GENERATORS);
                    if matches!(ty_spec, TypeSpec::Dictionary) {
                        allowed.push("key_type");
                    }
                    self.check_keys(t, &allowed, f, "a field")?;
                    let (dt, class) = match &ty_spec {
                        TypeSpec::Scalar(dt) => (dt.clone(), Class::of(dt)),
                        _ => (DataType::Null, Class::Dict),
                    };
                    let generator = self.generator(t, class, f, v.span())?.ok_or_else(|| {
                        self.err(
                            v.span(),
                            f,
                            format!("needs a generator: one of {}", GENERATORS.join(", ")),
                        )
                    })?;
                    if let TypeSpec::Scalar(DataType::FixedSizeBinary(width)) = &ty_spec {
                        check_fixed(*width as usize, &generator)
                            .map_err(|m| self.err(v.span(), f, m))?;
                    }
                    let data_type = if class == Class::Dict {
                        let categories = match &generator {
                            Generator::Weighted { values, .. } => values.len(),
                            Generator::Zipf {
                                values: Some(values),
                                ..
                            } => values.len(),
                            Generator::Constant(_) => 1,
                            g @ (Generator::ByRow { .. } | Generator::Calendar(_)) => {
                                category_values(g).map_or(0, |v| v.len())
                            }
                            _ => {
                                return Err(self.err(
                                v.span(),
                                f,
                                "a dictionary field needs `weighted`, `zipf` with values, `constant`, `values_by_row`, or a `calendar` name",
                            ));
                            }
                        };
                        let key = match get(t, "key_type") {
                            Some(k) => {
                                let text = self.string(k, f, "key_type")?;
                                let dt = match parse_type(&text) {
                                    Ok(TypeSpec::Scalar(dt)) if dt.is_dictionary_key_type() => dt,
                                    _ => {
                                        return Err(self.err(
                                            k.span(),
                                            f,
                                            format!(
                                                "`key_type` must be an integer type, not `{text}`"
                                            ),
                                        ));
                                    }
                                };
                                let Class::Int { max, .. } = Class::of(&dt) else {
                                    unreachable!("integer types")
                                };
                                if (categories as i128) > max + 1 {
                                    return Err(self.err(
                                        k.span(),
                                        f,
                                        format!("{categories} values do not fit key type {text}"),
                                    ));
                                }
                                dt
                            }
                            None if categories <= 256 => DataType::UInt8,
                            None if categories <= 65_536 => DataType::UInt16,
                            None => DataType::UInt32,
                        };
                        DataType::Dictionary(Box::new(key), Box::new(DataType::Utf8))
                    } else {
                        dt
                    };
                    Kind::Scalar {
                        data_type,
                        generator,
                    }
                }
                TypeSpec::Struct => {
                    allowed.push("fields");
                    self.check_keys(t, &allowed, f, "a struct field")?;
                    let Some(fields) = get(t, "fields") else {
                        return Err(self.err(v.span(), f, "a struct needs `fields`"));
                    };
                    Kind::Struct(self.fields(fields, &path)?)
                }
                TypeSpec::List => {
                    allowed.extend(["item", "length", "empty_as_null"]);
                    self.check_keys(t, &allowed, f, "a list field")?;
                    let Some(item) = get(t, "item") else {
                        return Err(self.err(v.span(), f, "a list needs an `item` field"));
                    };
                    let item = self.child(item, &path, "item")?;
                    let length = self.length(t, f, v.span())?;
                    empty_as_null = get(t, "empty_as_null")
                        .map(|e| self.boolean(e, f, "empty_as_null"))
                        .transpose()?
                        .unwrap_or(false);
                    Kind::List {
                        item: Box::new(item),
                        length,
                        empty_as_null,
                    }
                }
                TypeSpec::Map => {
                    allowed.extend(["key", "value", "length"]);
                    self.check_keys(t, &allowed, f, "a map field")?;
                    let (Some(k), Some(val)) = (get(t, "key"), get(t, "value")) else {
                        return Err(self.err(v.span(), f, "a map needs `key` and `value` fields"));
                    };
                    let key = self.child(k, &path, "key")?;
                    if key.nullable {
                        return Err(self.err(k.span(), Some(&key.path), "map keys cannot be null"));
                    }
                    if !matches!(key.kind, Kind::Scalar { .. }) {
                        return Err(self.err(
                            k.span(),
                            Some(&key.path),
                            "map keys must be scalars",
                        ));
                    }
                    let value = self.child(val, &path, "value")?;
                    let length = self.length(t, f, v.span())?;
                    if let Kind::Scalar { generator, .. } = &key.kind {
                        let distinct_of = |vals: Vec<&Value>| {
                            let mut seen: Vec<&Value> = Vec::new();
                            for v in vals {
                                if !seen.contains(&v) {
                                    seen.push(v);
                                }
                            }
                            seen.len() as u64
                        };
                        if let Some(vals) = dictionary_values(generator)
                            && distinct_of(vals.iter().collect()) != vals.len() as u64
                        {
                            return Err(self.err(
                                k.span(),
                                Some(&key.path),
                                "map key values must be distinct (keys are distinct within a map)",
                            ));
                        }
                        let distinct = match generator {
                            Generator::Weighted { values, weights } => distinct_of(
                                values
                                    .iter()
                                    .zip(weights)
                                    .filter(|(_, w)| **w > 0.0)
                                    .map(|(v, _)| v)
                                    .collect(),
                            ),
                            Generator::Zipf {
                                values: Some(v), ..
                            } => distinct_of(v.iter().collect()),
                            Generator::Constant(_) => 1,
                            // Integer keys `start + step * id` repeat only after
                            // 2^(bits - trailing zeros of step) ids.
                            Generator::Sequence {
                                step: Value::Int(step),
                                ..
                            } if *step != 0 => {
                                let bits = match &key.kind {
                                    Kind::Scalar { data_type, .. } => {
                                        data_type.primitive_width().unwrap_or(8) as u32 * 8
                                    }
                                    _ => 64,
                                };
                                let period = bits.saturating_sub((*step as u64).trailing_zeros());
                                1u64.checked_shl(period).unwrap_or(u64::MAX)
                            }
                            Generator::Sequence { .. } => {
                                return Err(self.err(
                                k.span(),
                                Some(&key.path),
                                "map keys from a sequence need an integer type and a non-zero step (keys are distinct within a map)",
                            ));
                            }
                            _ => {
                                return Err(self.err(
                                k.span(),
                                Some(&key.path),
                                "map keys are distinct within a map: use `weighted`, `zipf` with values, `constant` or `sequence`",
                            ));
                            }
                        };
                        let most = max_length(&length);
                        if most > distinct {
                            return Err(self.err(
                            k.span(),
                            Some(&key.path),
                            format!(
                                "a map may hold {most} entries but its key has only {distinct} possible values (keys are distinct within a map)"
                            ),
                        ));
                        }
                    }
                    Kind::Map {
                        key: Box::new(key),
                        value: Box::new(value),
                        length,
                    }
                }
            },
        };
        let explicit = get(t, "nullable")
            .map(|n| self.boolean(n, f, "nullable").map(|b| (b, n.span())))
            .transpose()?;
        let when_items = match get(t, "when") {
            None => Vec::new(),
            Some(w) => match w.get_ref() {
                DeValue::Array(items) => items.iter().cloned().collect(),
                DeValue::Table(_) => vec![w.clone()],
                other => {
                    return Err(self.err(
                        w.span(),
                        f,
                        format!(
                            "`when` must be an array of tables, not {}",
                            kind_name(other)
                        ),
                    ));
                }
            },
        };
        let can_be_null = null_rate > 0.0 || empty_as_null;
        let nullable = match explicit {
            Some((false, span)) if can_be_null => {
                return Err(self.err(
                    span,
                    f,
                    "is `nullable = false` but has a null rate (or empty lists as nulls)",
                ));
            }
            Some((b, _)) => b || can_be_null,
            None => can_be_null,
        };
        Ok((
            Field {
                name,
                path,
                line,
                kind,
                null_rate,
                nullable,
                parquet_dictionary,
                when: Vec::new(),
            },
            when_items,
        ))
    }

    /// A list item or map key/value: a field whose `when` cases are
    /// rejected (it has no siblings).
    fn child(&self, v: &Sp<'_>, parent: &str, default: &str) -> Result<Field, SpecError> {
        let (f, when) = self.field(v, parent, Some(default))?;
        if let Some(w) = when.first() {
            return Err(self.err(
                w.span(),
                Some(&f.path),
                "`when` needs sibling fields; a list item or map entry has none (put a struct inside)",
            ));
        }
        Ok(f)
    }

    /// A child table's `count` (rows per parent row), read as a list's
    /// `length` is.
    /// A child table's `count`, and its cases (`when`, each a
    /// `condition` on the parent row and a count generator; the
    /// conditions are checked once the parent's fields are known).
    fn count(
        &self,
        t: &DeTable<'_>,
        f: Option<&str>,
    ) -> Result<(Generator, Vec<CountCase>), SpecError> {
        const COUNTS: [&str; 5] = ["constant", "uniform", "normal", "zipf", "weighted"];
        let class = Class::Int {
            min: 0,
            max: MAX_LENGTH,
        };
        let Some(c) = get(t, "count") else {
            return Err(self.err(0..0, f, "needs a `count`"));
        };
        if let DeValue::Integer(_) = c.get_ref() {
            return Ok((
                Generator::Constant(self.value(c, class, f, "count")?),
                Vec::new(),
            ));
        }
        let ct = self.table(c, f, "`count`")?;
        let mut keys = COUNTS.to_vec();
        keys.push("when");
        self.check_keys(ct, &keys, f, "`count`")?;
        let count = self
            .generator(ct, class, f, c.span())?
            .ok_or_else(|| self.err(c.span(), f, "`count` needs a generator"))?;
        let mut cases = Vec::new();
        if let Some(w) = get(ct, "when") {
            let DeValue::Array(items) = w.get_ref() else {
                return Err(self.err(
                    w.span(),
                    f,
                    "`count`'s `when` is an array of cases ({ condition = \"...\", uniform = { ... } })",
                ));
            };
            for item in items {
                let it = self.table(item, f, "a `count` case")?;
                let mut keys = COUNTS.to_vec();
                keys.push("condition");
                self.check_keys(it, &keys, f, "a `count` case")?;
                let Some(cond) = get(it, "condition") else {
                    return Err(self.err(
                        item.span(),
                        f,
                        "a `count` case needs a `condition` (an SQL test of the parent row's fields)",
                    ));
                };
                let condition = Expression::pending(self.string(cond, f, "condition")?);
                let count = self
                    .generator(it, class, f, item.span())?
                    .ok_or_else(|| self.err(item.span(), f, "a `count` case needs a generator"))?;
                cases.push(CountCase {
                    line: self.line(item.span().start),
                    condition,
                    count,
                });
            }
            if cases.len() > MAX_CASES {
                return Err(self.err(
                    w.span(),
                    f,
                    format!("`count` takes at most {MAX_CASES} `when` cases"),
                ));
            }
        }
        Ok((count, cases))
    }

    fn length(
        &self,
        t: &DeTable<'_>,
        f: Option<&str>,
        at: Range<usize>,
    ) -> Result<Generator, SpecError> {
        let class = Class::Int {
            min: 0,
            max: MAX_LENGTH,
        };
        let Some(l) = get(t, "length") else {
            return Err(self.err(
                at,
                f,
                "needs a `length` (elements per value): an integer or a generator table",
            ));
        };
        if let DeValue::Integer(_) = l.get_ref() {
            return Ok(Generator::Constant(self.value(l, class, f, "length")?));
        }
        let lt = self.table(l, f, "`length`")?;
        self.check_keys(
            lt,
            &["constant", "uniform", "normal", "zipf", "weighted"],
            f,
            "`length`",
        )?;
        let g = self
            .generator(lt, class, f, l.span())?
            .ok_or_else(|| self.err(l.span(), f, "`length` needs a generator"))?;
        if let Generator::Normal { .. } = g {
            // Lengths are clamped to 0..=MAX_LENGTH by the engine.
        }
        Ok(g)
    }

    /// An array of field tables: the children of a struct or the top level.
    fn fields(&self, v: &Sp<'_>, parent: &str) -> Result<Vec<Field>, SpecError> {
        let f = (!parent.is_empty()).then_some(parent);
        let DeValue::Array(items) = v.get_ref() else {
            return Err(self.err(
                v.span(),
                f,
                "`fields` must be an array of tables ([[fields]])",
            ));
        };
        if items.is_empty() {
            return Err(self.err(v.span(), f, "`fields` is empty"));
        }
        let mut fields: Vec<Field> = Vec::new();
        let mut whens = Vec::new();
        // Name -> its field's line.
        let mut lines = std::collections::HashMap::new();
        for item in items.iter() {
            let (field, when) = self.field(item, parent, None)?;
            if let Some(line) = lines.insert(field.name.clone(), field.line) {
                return Err(self.err(
                    item.span(),
                    Some(&field.path),
                    format!("a field of this name is already on line {line}"),
                ));
            }
            fields.push(field);
            whens.push(when);
        }
        // Which fields have cases that replace their generator: known
        // before any case is resolved, so that the answer does not depend on
        // the order of the fields.
        let gen_cases: Vec<bool> = whens
            .iter()
            .map(|ws| {
                ws.iter().any(|w| match w.get_ref() {
                    DeValue::Table(t) => t
                        .iter()
                        .any(|(k, _)| GENERATORS.contains(&k.get_ref().as_ref())),
                    _ => false,
                })
            })
            .collect();
        // `when` cases: resolved against the siblings now that all exist.
        for i in 0..fields.len() {
            let mut cases: Vec<When> = Vec::new();
            for w in &whens[i] {
                let case = self.when(w, &fields, i, &gen_cases)?;
                if let Some(first) = cases.first()
                    && (first.field.is_empty() || case.field.is_empty())
                    && first.field != case.field
                {
                    return Err(self.err(
                        w.span(),
                        Some(&fields[i].path),
                        "a field's `when` cases are all `condition`s, or all read one sibling with `is` or `is_null`",
                    ));
                }
                if let Some(first) = cases.first()
                    && first.field != case.field
                {
                    return Err(self.err(
                        w.span(),
                        Some(&fields[i].path),
                        format!(
                            "all `when` cases of a field must read the same sibling (`{}`, not `{}`)",
                            first.field, case.field
                        ),
                    ));
                }
                cases.push(case);
            }
            if cases.len() > MAX_CASES {
                return Err(self.err_at(
                    fields[i].line,
                    Some(&fields[i].path),
                    format!("a field takes at most {MAX_CASES} `when` cases"),
                ));
            }
            let f = &mut fields[i];
            if cases.iter().any(|c| c.null_rate.is_some_and(|r| r > 0.0)) {
                f.nullable = true;
            }
            f.when = cases;
        }
        self.resolve_draws(&mut fields)?;
        self.resolve_expressions(&mut fields, None)?;
        check_cycles(self, &fields)?;
        Ok(fields)
    }

    /// Sibling references that name the same `draw` read one row: each
    /// after the first reads the first's, as its `via`.
    fn resolve_draws(&self, fields: &mut [Field]) -> Result<(), SpecError> {
        let draw_of = |f: &Field| match &f.kind {
            Kind::Scalar {
                generator: Generator::Reference(r),
                ..
            } => r.draw.clone().map(|d| (d, r.table.clone())),
            _ => None,
        };
        for i in 0..fields.len() {
            let Some((d, table)) = draw_of(&fields[i]) else {
                continue;
            };
            let Some(first) = (0..i).find(|&j| draw_of(&fields[j]).is_some_and(|(e, _)| e == d))
            else {
                continue;
            };
            let (_, first_table) = draw_of(&fields[first]).expect("a draw");
            let first_name = fields[first].name.clone();
            let f = &mut fields[i];
            let err = |m: String| Err(self.err_at(f.line, Some(&f.path), m));
            if first_table != table {
                return err(format!(
                    "draw name `{d}` is used with two tables: `{first_table}` (field `{first_name}`) and `{table}`; a draw names one row of one table"
                ));
            }
            let Kind::Scalar {
                generator: Generator::Reference(r),
                ..
            } = &mut f.kind
            else {
                unreachable!("a draw is a reference's");
            };
            if r.pick != Pick::Uniform {
                return err(format!(
                    "draw `{d}`: field `{first_name}` draws its row; give `zipf` or `weight` to that field, not to the fields that read the same row"
                ));
            }
            r.via = Some(first_name);
        }
        Ok(())
    }

    /// Checks the `expr` fields of one level against their siblings:
    /// names, types and the field's own type. An `expr` where no
    /// siblings are (a list item, a map key or value) or in a `when` case
    /// is refused.
    ///
    /// An expression that reads qualified names (`parent.x`, `ps.x`) is
    /// checked once the dataset's tables are known: with `others` `None`
    /// it is left for then ([`resolve_qualified`]).
    fn resolve_expressions(
        &self,
        fields: &mut [Field],
        others: Option<&Others<'_>>,
    ) -> Result<(), SpecError> {
        fn refuse_nested(p: &P<'_>, f: &Field) -> Result<(), SpecError> {
            match &f.kind {
                Kind::Scalar {
                    generator: Generator::Expr(_),
                    ..
                } => Err(p.err_at(
                    f.line,
                    Some(&f.path),
                    "`expr` computes a value from sibling fields; a list item or map entry has none (give the expression to a field of a struct inside the list)",
                )),
                Kind::List { item, .. } => refuse_nested(p, item),
                Kind::Map { key, value, .. } => {
                    refuse_nested(p, key)?;
                    refuse_nested(p, value)
                }
                _ => Ok(()),
            }
        }
        let siblings: Vec<(String, Option<DataType>)> = fields
            .iter()
            .map(|f| {
                let dt = match &f.kind {
                    Kind::Scalar { data_type, .. } => Some(data_type.clone()),
                    _ => None,
                };
                (f.name.clone(), dt)
            })
            .collect();
        let readable: Vec<(&str, &DataType)> = siblings
            .iter()
            .filter_map(|(n, d)| d.as_ref().map(|d| (n.as_str(), d)))
            .collect();
        // Column numbers index `fields`, not just the readable ones.
        let index_of = |name: &str| siblings.iter().position(|(n, _)| n == name);
        let siblings_of: Vec<Draw> = fields
            .iter()
            .filter_map(|f| match &f.kind {
                Kind::Scalar {
                    generator: Generator::Reference(r),
                    ..
                } if r.via.is_none() => r.draw.as_ref().map(|d| Draw {
                    name: d.clone(),
                    table: r.table.clone(),
                    field: f.name.clone(),
                }),
                _ => None,
            })
            .collect();
        for f in fields.iter_mut() {
            // An aggregate over no children is null (but a count, 0).
            if let Kind::Scalar {
                generator: Generator::Aggregate(a),
                ..
            } = &f.kind
                && a.op != AggOp::Count
            {
                f.nullable = true;
            }
            if let Kind::List { item, .. } = &f.kind {
                refuse_nested(self, item)?;
            }
            if let Kind::Map { key, value, .. } = &f.kind {
                refuse_nested(self, key)?;
                refuse_nested(self, value)?;
            }
            if f.when
                .iter()
                .any(|w| matches!(w.generator, Some(Generator::Expr(_))))
            {
                return Err(self.err_at(
                    f.line,
                    Some(&f.path),
                    "a `when` case cannot give an `expr`; write the cases inside the expression (CASE WHEN ... END)",
                ));
            }
            for w in f.when.iter_mut() {
                let Condition::Expr(e) = &mut w.condition else {
                    continue;
                };
                if e.tree.is_some() {
                    continue;
                }
                let at = |c: u64, m: String| {
                    self.err_at(
                        w.line,
                        Some(&f.path),
                        format!("`condition` at column {c}: {m}"),
                    )
                };
                let sibling_only = |q: &str, x: &str| {
                    Err(format!(
                        "`{q}.{x}`: a `when` condition reads sibling fields; give the value to an `expr` sibling and test that"
                    ))
                };
                let (tree, inputs, _) = expr::check(&e.source, &readable, &sibling_only)
                    .map_err(|x| at(x.column, x.message))?;
                if inputs.contains(&f.name) {
                    return Err(at(
                        1,
                        format!("the condition reads its own field `{}`", f.name),
                    ));
                }
                if !expr::is_test(&tree) {
                    return Err(at(1, expr::not_a_test(&tree)));
                }
                e.tree = Some(tree.with_columns(&|i| index_of(readable[i].0).unwrap_or(i)));
                e.inputs = inputs;
            }
            let Kind::Scalar {
                data_type,
                generator: Generator::Expr(e),
            } = &mut f.kind
            else {
                continue;
            };
            if e.tree.is_some() {
                continue;
            }
            let at = |c: u64, m: String| {
                self.err_at(f.line, Some(&f.path), format!("`expr` at column {c}: {m}"))
            };
            let qualified = |q: &str, x: &str| match others {
                None => Err(LATER.to_string()),
                Some(o) => o.read(q, x, &siblings_of),
            };
            let (tree, inputs, reads) = match expr::check(&e.source, &readable, &qualified) {
                Err(x) if x.message == LATER => continue,
                r => r.map_err(|x| at(x.column, x.message))?,
            };
            if inputs.contains(&f.name) {
                return Err(at(
                    1,
                    format!("the expression reads its own field `{}`", f.name),
                ));
            }
            let n = readable.len();
            let tree = tree.with_columns(&|i| {
                if i < n {
                    index_of(readable[i].0).unwrap_or(i)
                } else {
                    siblings.len() + (i - n)
                }
            });
            expr::check_target(&tree, data_type).map_err(|m| at(1, m))?;
            if let Some(o) = others {
                e.reads = reads
                    .into_iter()
                    .map(|(q, x)| o.qualified_field(&q, &x, &siblings_of))
                    .collect::<Result<_, _>>()
                    .map_err(|m| at(1, m))?;
            }
            e.inputs = inputs;
            e.tree = Some(tree);
            // Nulls in, or a division by zero, give a null.
            f.nullable = true;
        }
        Ok(())
    }

    fn when(
        &self,
        w: &Sp<'_>,
        siblings: &[Field],
        me: usize,
        gen_cases: &[bool],
    ) -> Result<When, SpecError> {
        let field = &siblings[me];
        let f = Some(field.path.as_str());
        let t = self.table(w, f, "a `when` case")?;
        let mut allowed = vec!["field", "is", "is_null", "condition", "null_rate"];
        allowed.extend(GENERATORS);
        self.check_keys(t, &allowed, f, "a `when` case")?;
        let line = self.line(w.span().start);
        let (target_name, condition) = match get(t, "condition") {
            Some(c) => {
                if let Some((k, _)) = t
                    .iter()
                    .find(|(k, _)| matches!(k.get_ref().as_ref(), "field" | "is" | "is_null"))
                {
                    return Err(self.err(
                        k.span(),
                        f,
                        "a `when` case takes `condition` (an SQL test of the siblings) or `field` with `is` or `is_null`, not both",
                    ));
                }
                let source = self.string(c, f, "condition")?;
                (String::new(), Condition::Expr(Expression::pending(source)))
            }
            None => self.when_sibling(t, w, siblings, me, gen_cases)?,
        };
        let null_rate = get(t, "null_rate")
            .map(|r| self.rate(r, f, "null_rate"))
            .transpose()?;
        let generator = match &field.kind {
            Kind::Scalar { data_type, .. } => {
                let class = Class::of(data_type);
                let g = self.generator(t, class, f, w.span())?;
                if let (Some(g), Class::Dict) = (&g, class) {
                    let Kind::Scalar { generator, .. } = &field.kind else {
                        unreachable!()
                    };
                    if category_values(g) != category_values(generator) {
                        return Err(self.err(
                            w.span(),
                            f,
                            "a dictionary field's cases must draw from the same values (only weights may change)",
                        ));
                    }
                }
                g
            }
            _ => {
                if let Some((k, _)) = t
                    .iter()
                    .find(|(k, _)| GENERATORS.contains(&k.get_ref().as_ref()))
                {
                    return Err(self.err(
                        k.span(),
                        f,
                        "only scalar fields take a generator in `when`",
                    ));
                }
                None
            }
        };
        if null_rate.is_none() && generator.is_none() {
            return Err(self.err(
                w.span(),
                f,
                "a `when` case needs `null_rate` or a generator",
            ));
        }
        Ok(When {
            field: target_name,
            line,
            condition,
            null_rate,
            generator,
        })
    }

    /// The sibling a `when` case reads and its test (`is`, `is_null`).
    fn when_sibling(
        &self,
        t: &DeTable<'_>,
        w: &Sp<'_>,
        siblings: &[Field],
        me: usize,
        gen_cases: &[bool],
    ) -> Result<(String, Condition), SpecError> {
        let field = &siblings[me];
        let f = Some(field.path.as_str());
        let Some(target) = get(t, "field") else {
            return Err(self.err(
                w.span(),
                f,
                "a `when` case needs `field` (a sibling's name)",
            ));
        };
        let target_name = self.string(target, f, "field")?;
        let Some(sibling) = siblings.iter().position(|s| s.name == target_name) else {
            return Err(self.err(
                target.span(),
                f,
                format!(
                    "`when` refers to `{target_name}`, which is not a sibling; the siblings are {}",
                    siblings
                        .iter()
                        .filter(|s| s.name != field.name)
                        .map(|s| s.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        };
        if sibling == me {
            return Err(self.err(target.span(), f, "`when` cannot refer to the field itself"));
        }
        let sib = &siblings[sibling];
        let condition = match (get(t, "is"), get(t, "is_null")) {
            (Some(is), None) => {
                let (class, categorical) = match &sib.kind {
                    Kind::Scalar {
                        data_type,
                        generator,
                    } => (
                        Class::of(data_type),
                        categories(generator).is_some() && !gen_cases[sibling],
                    ),
                    _ => (Class::Str, false),
                };
                if !categorical {
                    return Err(self.err(
                        is.span(),
                        f,
                        format!(
                            "`is` needs `{target_name}` to be categorical (weighted, zipf with values, \
                             probability or constant, at most 255 values) with no `when` case that \
                             replaces its generator; use `is_null` for any field"
                        ),
                    ));
                }
                let vals = match is.get_ref() {
                    DeValue::Array(_) => self.values(is, class, f, "is")?,
                    _ => vec![self.value(is, class, f, "is")?],
                };
                let Kind::Scalar { generator, .. } = &sib.kind else {
                    unreachable!("checked above")
                };
                let known = categories(generator).unwrap_or_default();
                if let Some(missing) = vals.iter().find(|v| !known.contains(v)) {
                    return Err(self.err(
                        is.span(),
                        f,
                        format!("`{target_name}` never takes the value {missing}"),
                    ));
                }
                Condition::Is(vals)
            }
            (None, Some(n)) => Condition::IsNull(self.boolean(n, f, "is_null")?),
            _ => {
                return Err(self.err(
                    w.span(),
                    f,
                    "a `when` case needs exactly one of `is` and `is_null`",
                ));
            }
        };
        Ok((target_name, condition))
    }
}

/// The most `when` cases of a field or a `count` (a row's branch is a byte,
/// the last value the field's own settings).
const MAX_CASES: usize = 255;

/// An error message that means "check this expression later".
const LATER: &str = "\u{0}checked with the dataset's tables";

/// A sibling reference's `draw` name: the table it draws a row of, and
/// the field that draws it.
struct Draw {
    name: String,
    table: String,
    field: String,
}

/// A top-level field as another row's expression sees it: name, type,
/// and whether it is an aggregate of its table's children.
type Shape = (String, DataType, bool);

/// What the qualified names of one level's expressions can read: the
/// dataset's tables (their top-level fields and types) and the level's
/// parent table (a child table's top level only).
struct Others<'a> {
    /// Each table's top-level fields: name, type, and whether it is an
    /// aggregate of the table's children (which cannot be read from
    /// another row: it would be computed through a reference).
    tables: &'a [(String, Vec<Shape>)],
    parent: Option<&'a str>,
}

impl Others<'_> {
    fn field_type(&self, table: &str, x: &str, q: &str) -> Result<DataType, String> {
        let Some((_, fields)) = self.tables.iter().find(|(n, _)| n == table) else {
            return Err(format!("`{q}.{x}`: table `{table}` is not in the dataset"));
        };
        match fields.iter().find(|(n, _, _)| n == x) {
            Some((_, _, true)) => Err(format!(
                "`{q}.{x}` is an aggregate of table `{table}`'s children; another row cannot read it (copy what it aggregates instead)"
            )),
            Some((_, dt, _)) => Ok(dt.clone()),
            None => Err(format!(
                "unknown name `{q}.{x}`; the fields of `{q}` (table `{table}`) are {}",
                fields
                    .iter()
                    .map(|(n, _, _)| n.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }

    /// The type of `q.x`.
    fn read(&self, q: &str, x: &str, draws: &[Draw]) -> Result<DataType, String> {
        if q == "parent" {
            return match self.parent {
                Some(p) => self.field_type(p, x, q),
                None => Err(format!(
                    "`parent.{x}` reads the row's parent row: only in the top-level fields of a child table (`children_of`)"
                )),
            };
        }
        match draws.iter().find(|d| d.name == q) {
            Some(d) => self.field_type(&d.table, x, q),
            None => {
                let names: Vec<&str> = draws.iter().map(|d| d.name.as_str()).collect();
                Err(format!(
                    "`{q}.{x}`: `{q}` is neither `parent` nor the `draw` name of a sibling reference ({})",
                    if names.is_empty() {
                        "no sibling reference names its row with `draw = \"...\"`".to_string()
                    } else {
                        format!("the draw names here are {}", names.join(", "))
                    }
                ))
            }
        }
    }

    /// `q.x` as a reference to the same row.
    fn qualified_field(&self, q: &str, x: &str, draws: &[Draw]) -> Result<QualifiedField, String> {
        let data_type = self.read(q, x, draws)?;
        let reference = match draws.iter().find(|d| d.name == q) {
            Some(d) if q != "parent" => Reference {
                table: d.table.clone(),
                field: x.to_string(),
                pick: Pick::Uniform,
                via: Some(d.field.clone()),
                draw: None,
                offset: None,
            },
            _ => Reference {
                table: self.parent.unwrap_or_default().to_string(),
                field: x.to_string(),
                pick: Pick::Parent,
                via: None,
                draw: None,
                offset: None,
            },
        };
        Ok(QualifiedField {
            name: format!("{q}.{x}"),
            data_type,
            reference,
        })
    }
}

/// Checks the expressions left for when the tables are known (those
/// that read qualified names), at every level of `fields`.
fn resolve_qualified(
    p: &P<'_>,
    fields: &mut [Field],
    top: &Others<'_>,
    nested: &Others<'_>,
) -> Result<(), SpecError> {
    fn descend(p: &P<'_>, f: &mut Field, nested: &Others<'_>) -> Result<(), SpecError> {
        match &mut f.kind {
            Kind::Struct(children) => resolve_qualified(p, children, nested, nested),
            Kind::List { item, .. } => descend(p, item, nested),
            Kind::Map { key, value, .. } => {
                descend(p, key, nested)?;
                descend(p, value, nested)
            }
            Kind::Scalar { .. } => Ok(()),
        }
    }
    p.resolve_expressions(fields, Some(top))?;
    check_cycles(p, fields)?;
    for f in fields.iter_mut() {
        descend(p, f, nested)?;
    }
    Ok(())
}

/// Checks the conditions of child tables' `count` cases against their
/// parent table's top-level fields.
fn resolve_count_cases(p: &P<'_>, tables: &mut [Table]) -> Result<(), SpecError> {
    for ti in 0..tables.len() {
        let Some(c) = &tables[ti].children_of else {
            continue;
        };
        if c.count_when.is_empty() {
            continue;
        }
        let Some(pi) = tables.iter().position(|t| t.spec.name == c.parent) else {
            continue;
        };
        let fields: Vec<(String, DataType)> = tables[pi]
            .spec
            .fields
            .iter()
            .map(|f| (f.name.clone(), kind_type(&f.kind)))
            .collect();
        let readable: Vec<(&str, &DataType)> = fields
            .iter()
            .filter(|(_, d)| ETy::of(d).is_some())
            .map(|(n, d)| (n.as_str(), d))
            .collect();
        let index_of = |name: &str| fields.iter().position(|(n, _)| n == name);
        let aggregates: Vec<String> = tables[pi]
            .spec
            .fields
            .iter()
            .filter(|f| is_aggregate(f))
            .map(|f| f.name.clone())
            .collect();
        let tname = tables[ti].spec.name.clone();
        let Some(c) = &mut tables[ti].children_of else {
            continue;
        };
        for case in &mut c.count_when {
            let at = |col: u64, m: String| {
                p.err_at(
                    case.line,
                    None,
                    format!("table `{tname}`: `count` condition at column {col}: {m}"),
                )
            };
            let plain = |q: &str, x: &str| {
                Err(format!(
                    "`{q}.{x}`: a `count` condition reads the parent row's fields by their names"
                ))
            };
            let e = &mut case.condition;
            let (tree, inputs, _) =
                expr::check(&e.source, &readable, &plain).map_err(|x| at(x.column, x.message))?;
            if !expr::is_test(&tree) {
                return Err(at(1, expr::not_a_test(&tree)));
            }
            if let Some(a) = inputs.iter().find(|n| aggregates.contains(n)) {
                return Err(at(
                    1,
                    format!(
                        "`{a}` is an aggregate of the parent's children; a `count` condition cannot read it (the counts would depend on it)"
                    ),
                ));
            }
            e.tree = Some(tree.with_columns(&|i| index_of(readable[i].0).unwrap_or(i)));
            e.inputs = inputs;
        }
    }
    Ok(())
}

/// [`resolve_qualified`] for every table of a dataset (or a plain spec's
/// one, where no qualified name can be read).
fn resolve_qualified_tables(p: &P<'_>, tables: &mut [Table]) -> Result<(), SpecError> {
    let shapes: Vec<(String, Vec<Shape>)> = tables
        .iter()
        .map(|t| {
            let fields = t.spec.fields.iter();
            let fields = fields.map(|f| (f.name.clone(), kind_type(&f.kind), is_aggregate(f)));
            (t.spec.name.clone(), fields.collect())
        })
        .collect();
    for t in tables.iter_mut() {
        let parent = t.children_of.as_ref().map(|c| c.parent.clone());
        let top = Others {
            tables: &shapes,
            parent: parent.as_deref(),
        };
        let nested = Others {
            tables: &shapes,
            parent: None,
        };
        let name = t.spec.name.clone();
        resolve_qualified(p, &mut t.spec.fields, &top, &nested).map_err(|mut e| {
            e.field = e.field.map(|f| format!("{name}.{f}"));
            e
        })?;
    }
    Ok(())
}

fn check_cycles(p: &P<'_>, fields: &[Field]) -> Result<(), SpecError> {
    // Depth-first search over "depends on" edges.
    fn visit(i: usize, fields: &[Field], state: &mut [u8], p: &P<'_>) -> Result<(), SpecError> {
        match state[i] {
            2 => return Ok(()),
            1 => {
                return Err(p
                    .err(
                        0..0,
                        Some(&fields[i].path),
                        "`when` cases or expressions form a cycle through this field",
                    )
                    .at_line(fields[i].line));
            }
            _ => {}
        }
        state[i] = 1;
        for dep in depends_on(&fields[i]) {
            if let Some(j) = fields.iter().position(|f| f.name == dep) {
                visit(j, fields, state, p)?;
            }
        }
        state[i] = 2;
        Ok(())
    }
    let mut state = vec![0u8; fields.len()];
    for i in 0..fields.len() {
        visit(i, fields, &mut state, p)?;
    }
    Ok(())
}

impl SpecError {
    fn at_line(mut self, line: usize) -> Self {
        self.line = line;
        self
    }
}

fn distribution_message(e: crate::Error) -> String {
    match e {
        crate::Error::InvalidDistribution(m) => m,
        other => other.to_string(),
    }
}

fn int_of(text: &str, radix: u32) -> Option<i128> {
    let t: String = text.chars().filter(|c| *c != '_').collect();
    let (neg, digits) = match t.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, t.strip_prefix('+').unwrap_or(&t)),
    };
    let digits = if radix != 10 {
        digits
            .strip_prefix("0x")
            .or_else(|| digits.strip_prefix("0o"))
            .or_else(|| digits.strip_prefix("0b"))
            .unwrap_or(digits)
    } else {
        digits
    };
    let v = i128::from_str_radix(digits, radix).ok()?;
    Some(if neg { -v } else { v })
}

fn float_of(text: &str) -> Option<f64> {
    let t: String = text.chars().filter(|c| *c != '_').collect();
    match t.as_str() {
        "inf" | "+inf" => Some(f64::INFINITY),
        "-inf" => Some(f64::NEG_INFINITY),
        "nan" | "+nan" | "-nan" => Some(f64::NAN),
        _ => t.parse().ok(),
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub(crate) fn days_from_civil(y: i128, m: i128, d: i128) -> i128 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn parse_date(s: &str) -> Option<i128> {
    let mut it = s.trim().splitn(3, '-');
    let y: i128 = it.next()?.parse().ok()?;
    let m: i128 = it.next()?.parse().ok()?;
    let d: i128 = it.next()?.parse().ok()?;
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    ((-1_000_000..=1_000_000).contains(&y)
        && (1..=12).contains(&m)
        && (1..=days[(m - 1) as usize]).contains(&d))
    .then(|| days_from_civil(y, m, d))
}

/// The TOML document of a spec: its parser state and root table.
fn load<'i>(text: &'i str, origin: &'i str) -> Result<(P<'i>, DeTable<'i>), SpecError> {
    let p = P {
        origin,
        newlines: text
            .bytes()
            .enumerate()
            .filter(|&(_, b)| b == b'\n')
            .map(|(i, _)| i)
            .collect(),
    };
    let root = DeTable::parse(text).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        let line = p.line(span.start);
        let line_start = text[..span.start.min(text.len())]
            .rfind('\n')
            .map_or(0, |i| i + 1);
        SpecError {
            origin: origin.to_string(),
            line,
            column: Some(span.start.saturating_sub(line_start) + 1),
            field: None,
            message: format!("TOML syntax: {}", e.message().trim()),
        }
    })?;
    Ok((p, root.into_inner()))
}

impl P<'_> {
    /// The `name` of `t` (the dataset's or a table's), checked: it names
    /// files.
    fn file_name(
        &self,
        t: &DeTable<'_>,
        what: &str,
        at: Range<usize>,
    ) -> Result<String, SpecError> {
        let Some(n) = get(t, "name") else {
            return Err(self.err(at, None, format!("{what} needs a `name`")));
        };
        let name = self.string(n, None, "name")?;
        if name.len() > MAX_NAME_BYTES {
            return Err(self.err(
                n.span(),
                None,
                format!(
                    "`name` = \"{}\" is {} bytes long; names are at most {MAX_NAME_BYTES}",
                    shown(&name),
                    name.len()
                ),
            ));
        }
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            || name == "."
            || name == ".."
        {
            return Err(self.err(
                n.span(),
                None,
                format!(
                    "`name` = {name:?}: use letters, digits, `-`, `_` and `.` (it names files)"
                ),
            ));
        }
        Ok(name)
    }
}

pub(super) fn parse(text: &str, origin: &str) -> Result<Spec, SpecError> {
    let (p, t) = load(text, origin)?;
    if let Some(tables) = get(&t, "tables") {
        return Err(p.err(
            tables.span(),
            None,
            "this file lists `[[tables]]`: a dataset of several tables (read it as a dataset: `strata generate --spec`, `strata spec check`)",
        ));
    }
    let mut spec = single(&p, &t)?;
    let none = Others {
        tables: &[],
        parent: None,
    };
    resolve_qualified(&p, &mut spec.fields, &none, &none)?;
    check_row_fields(&p, &spec.fields, None)?;
    if let Some(f) = spec.fields.iter().find(|f| {
        matches!(
            f.kind,
            Kind::Scalar {
                generator: Generator::Aggregate(_),
                ..
            }
        )
    }) {
        return Err(p.err_at(
            f.line,
            Some(&f.path),
            "`aggregate` reads the rows of a child table; put the tables of a dataset in one file, each a `[[tables]]` entry",
        ));
    }
    if let Some((f, r)) = references(&spec).into_iter().next() {
        return Err(p.err_at(
            f.line,
            Some(&f.path),
            format!(
                "`ref` reads table `{}`, but this spec has no `[[tables]]`: put the tables of a dataset in one file, each a `[[tables]]` entry",
                r.table
            ),
        ));
    }
    Ok(spec)
}

/// A spec of one table from its root table.
fn single(p: &P<'_>, t: &DeTable<'_>) -> Result<Spec, SpecError> {
    p.check_keys(t, &["name", "description", "fields"], None, "the spec")?;
    let name = p.file_name(t, "the spec", 0..0)?;
    let description = get(t, "description")
        .map(|d| p.string(d, None, "description"))
        .transpose()?;
    let Some(fields) = get(t, "fields") else {
        return Err(p.err(0..0, None, "the spec needs `fields` ([[fields]] tables)"));
    };
    let fields = p.fields(fields, "")?;
    Ok(Spec {
        name,
        description,
        fields,
    })
}

/// Every field of `spec` (at any depth) whose generator, or a case's, is
/// a reference, with that reference.
/// Whether `f` is an aggregate of its table's children.
fn is_aggregate(f: &Field) -> bool {
    matches!(
        f.kind,
        Kind::Scalar {
            generator: Generator::Aggregate(_),
            ..
        }
    )
}

/// Whether `name` can stand in an expression as it is (`ps` in `ps.x`).
fn is_plain_name(name: &str) -> bool {
    let mut c = name.chars();
    c.next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && c.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn references(spec: &Spec) -> Vec<(&Field, &Reference)> {
    let mut out = Vec::new();
    for (f, _) in spec.walk() {
        if let Kind::Scalar { generator, .. } = &f.kind {
            let cases = f.when.iter().filter_map(|w| w.generator.as_ref());
            for g in std::iter::once(generator).chain(cases) {
                if let Generator::Reference(r) = g {
                    out.push((f, r));
                }
            }
        }
    }
    out
}

/// Calls `f` on every field of `fields` and, below each, on those of its
/// struct, list or map, depth first, with whether it is a table's
/// top-level field (`top` for `fields` themselves).
fn each_field_mut<E>(
    fields: &mut [Field],
    top: bool,
    f: &mut impl FnMut(&mut Field, bool) -> Result<(), E>,
) -> Result<(), E> {
    for x in fields {
        f(x, top)?;
        match &mut x.kind {
            Kind::Scalar { .. } => {}
            Kind::Struct(children) => each_field_mut(children, false, f)?,
            Kind::List { item, .. } => each_field_mut(std::slice::from_mut(&mut **item), false, f)?,
            Kind::Map { key, value, .. } => {
                each_field_mut(std::slice::from_mut(&mut **key), false, f)?;
                each_field_mut(std::slice::from_mut(&mut **value), false, f)?;
            }
        }
    }
    Ok(())
}

pub(super) fn parse_dataset(text: &str, origin: &str) -> Result<Dataset, SpecError> {
    let (p, t) = load(text, origin)?;
    let Some(tables_v) = get(&t, "tables") else {
        let spec = parse(text, origin)?;
        return Ok(Dataset {
            name: spec.name.clone(),
            description: spec.description.clone(),
            tables: vec![Table {
                spec,
                line: 0,
                rows: None,
                children_of: None,
                calendar: None,
            }],
            multi_table: false,
            origin: origin.to_string(),
        });
    };
    if let Some(f) = get(&t, "fields") {
        return Err(p.err(
            f.span(),
            None,
            "give `fields` (a dataset of one table) or `[[tables]]`, not both",
        ));
    }
    p.check_keys(&t, &["name", "description", "tables"], None, "the dataset")?;
    let name = p.file_name(&t, "the dataset", 0..0)?;
    let description = get(&t, "description")
        .map(|d| p.string(d, None, "description"))
        .transpose()?;
    let DeValue::Array(items) = tables_v.get_ref() else {
        return Err(p.err(
            tables_v.span(),
            None,
            "`tables` must be an array of tables ([[tables]])",
        ));
    };
    if items.is_empty() {
        return Err(p.err(tables_v.span(), None, "`tables` is empty"));
    }
    let mut tables: Vec<Table> = Vec::new();
    for item in items.iter() {
        let tt = p.table(item, None, "a table")?;
        p.check_keys(
            tt,
            &[
                "name",
                "description",
                "rows",
                "rows_per_scale",
                "children_of",
                "count",
                "calendar",
                "fields",
            ],
            None,
            "a table",
        )?;
        let tname = p.file_name(tt, "a table", item.span())?;
        if let Some(prev) = tables.iter().find(|x| x.spec.name == tname) {
            return Err(p.err(
                item.span(),
                None,
                format!("a table named `{tname}` is already on line {}", prev.line),
            ));
        }
        let children_of = match (get(tt, "children_of"), get(tt, "count")) {
            (Some(c), count) => {
                let parent = p.string(c, None, "children_of")?;
                if let Some(r) = get(tt, "rows").or(get(tt, "rows_per_scale")) {
                    return Err(p.err(
                        r.span(),
                        None,
                        format!(
                            "table `{tname}`: a child table's rows follow its parent's (`count` per parent row); drop `rows`/`rows_per_scale`"
                        ),
                    ));
                }
                if count.is_none() {
                    return Err(p.err(
                        c.span(),
                        None,
                        format!(
                            "table `{tname}` needs a `count` (rows per `{parent}` row): an integer or a generator table"
                        ),
                    ));
                }
                let (count, count_when) = p.count(tt, Some(&tname)).map_err(|mut e| {
                    e.field = None;
                    e.message = format!("table `{tname}`: {}", e.message);
                    e
                })?;
                Some(ChildrenOf {
                    parent,
                    count,
                    count_when,
                })
            }
            (None, Some(c)) => {
                return Err(p.err(
                    c.span(),
                    None,
                    format!(
                        "table `{tname}`: `count` is for child tables (with `children_of`); give `rows` or `rows_per_scale`"
                    ),
                ));
            }
            (None, None) => None,
        };
        let calendar = match get(tt, "calendar") {
            None => None,
            Some(c) => {
                if let Some(k) = ["rows", "rows_per_scale", "children_of"]
                    .into_iter()
                    .find(|k| get(tt, k).is_some())
                {
                    return Err(p.err(
                        c.span(),
                        None,
                        format!(
                            "table `{tname}`: a calendar table has one row per day of its `calendar`; drop `{k}`"
                        ),
                    ));
                }
                let ct = p.table(c, None, "`calendar`")?;
                p.check_keys(ct, &["start", "end"], None, "`calendar`")?;
                let day = |k: &str| -> Result<i32, SpecError> {
                    let v = get(ct, k).ok_or_else(|| {
                        p.err(
                            c.span(),
                            None,
                            format!("table `{tname}`: `calendar` needs `{k}` (a date)"),
                        )
                    })?;
                    match p.value(v, Class::Date, None, k)? {
                        Value::Int(d) => Ok(d as i32),
                        _ => unreachable!("dates are integers"),
                    }
                };
                let (start, end) = (day("start")?, day("end")?);
                if start > end {
                    return Err(p.err(
                        c.span(),
                        None,
                        format!("table `{tname}`: the calendar ends before it starts"),
                    ));
                }
                Some(Calendar { start, end })
            }
        };
        let rows = match (get(tt, "rows"), get(tt, "rows_per_scale")) {
            _ if children_of.is_some() => Rows::Fixed(0),
            _ if let Some(c) = calendar => Rows::Fixed(c.days()),
            (Some(r), None) => {
                let n = p.integer(r, None, "rows")?;
                if !(0..=i128::from(u64::MAX)).contains(&n) {
                    return Err(p.err(
                        r.span(),
                        None,
                        format!("table `{tname}`: `rows` is a count, not {n}"),
                    ));
                }
                Rows::Fixed(n as u64)
            }
            (None, Some(r)) => {
                let x = p.number(r, None, "rows_per_scale")?;
                if !(x.is_finite() && x > 0.0) {
                    return Err(p.err(
                        r.span(),
                        None,
                        format!(
                            "table `{tname}`: `rows_per_scale` must be a positive number, not {x}"
                        ),
                    ));
                }
                Rows::PerScale(x)
            }
            (Some(r), Some(_)) => {
                return Err(p.err(
                    r.span(),
                    None,
                    format!("table `{tname}`: give `rows` or `rows_per_scale`, not both"),
                ));
            }
            (None, None) => {
                return Err(p.err(
                    item.span(),
                    None,
                    format!(
                        "table `{tname}` needs `rows` (a fixed count) or `rows_per_scale` (rows per unit of --scale)"
                    ),
                ));
            }
        };
        let tdesc = get(tt, "description")
            .map(|d| p.string(d, None, "description"))
            .transpose()?;
        let table_line = p.line(item.span().start);
        let fields = match get(tt, "fields") {
            None if calendar.is_some() => calendar_fields(table_line),
            None => {
                return Err(p.err(
                    item.span(),
                    None,
                    format!("table `{tname}` needs `fields` ([[tables.fields]] tables)"),
                ));
            }
            Some(fields) => p.fields(fields, "").map_err(|mut e| {
                e.field = Some(match e.field.take() {
                    Some(f) => format!("{tname}.{f}"),
                    None => tname.clone(),
                });
                e
            })?,
        };
        tables.push(Table {
            spec: Spec {
                name: tname,
                description: tdesc,
                fields,
            },
            line: table_line,
            rows: children_of.is_none().then_some(rows),
            children_of,
            calendar,
        });
    }
    fill_parents(&p, &mut tables)?;
    check_row_generators(&p, &tables)?;
    check_aggregates(&p, &tables)?;
    copy_from_references(&mut tables);
    resolve_qualified_tables(&p, &mut tables)?;
    resolve_count_cases(&p, &mut tables)?;
    resolve_references(&p, &tables)?;
    Ok(Dataset {
        name,
        description,
        tables,
        multi_table: true,
        origin: origin.to_string(),
    })
}

/// Checks every reference of `tables`: the table and its top-level field
/// exist, the types agree, the table has rows, cases change only the
/// null rate, and no table reaches itself through references.
fn resolve_references(p: &P<'_>, tables: &[Table]) -> Result<(), SpecError> {
    let names: Vec<&str> = tables.iter().map(|t| t.spec.name.as_str()).collect();
    // Parent tables of each table, with the field and line of one
    // reference to each.
    let mut edges: Vec<Vec<(usize, String, usize)>> = vec![Vec::new(); tables.len()];
    for (ti, t) in tables.iter().enumerate() {
        let tname = &t.spec.name;
        for (f, r) in references(&t.spec) {
            let path = format!("{tname}.{}", f.path);
            let err = |m: String| Err(p.err_at(f.line, Some(&path), m));
            let Kind::Scalar {
                data_type,
                generator,
            } = &f.kind
            else {
                unreachable!("references are leaves");
            };
            // A case may draw the row another way (another `ref` to the
            // same table and field); nothing else.
            let own = match generator {
                Generator::Reference(own) => Some(own),
                _ => None,
            };
            let case_ok = |g: &Generator| match (g, own) {
                (Generator::Reference(c), Some(own)) => {
                    c.table == own.table
                        && c.field == own.field
                        && c.via.is_none()
                        && own.via.is_none()
                        && c.pick != Pick::Parent
                }
                _ => false,
            };
            if own.is_none()
                || f.when
                    .iter()
                    .any(|w| w.generator.as_ref().is_some_and(|g| !case_ok(g)))
            {
                return err(
                    "a `when` case of a `ref` field may give another `ref` to the same table and field (drawing its row another way, without `via`), or change the null rate; a field of another generator cannot switch to a `ref`"
                        .into(),
                );
            }
            let Some(pi) = names.iter().position(|n| *n == r.table) else {
                return err(format!(
                    "`ref` names table `{}`, which the dataset does not have; its tables are {}",
                    r.table,
                    names.join(", ")
                ));
            };
            let parent = &tables[pi];
            let Some(pf) = parent.spec.fields.iter().find(|x| x.name == r.field) else {
                return err(format!(
                    "`ref` names field `{}`, which is not a top-level field of table `{}`; its fields are {}",
                    r.field,
                    r.table,
                    parent
                        .spec
                        .fields
                        .iter()
                        .map(|x| x.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            };
            let pt = &kind_type(&pf.kind);
            if pt != data_type {
                return err(format!(
                    "this field is {} but `{}.{}` is {}: a reference copies the value, so give both the same type (for a dictionary, struct, list or map, its kind)",
                    type_text(data_type),
                    r.table,
                    r.field,
                    type_text(pt)
                ));
            }
            if let Pick::Weighted { field: w } = &r.pick {
                match parent
                    .spec
                    .fields
                    .iter()
                    .find(|x| &x.name == w)
                    .map(|x| &x.kind)
                {
                    Some(Kind::Scalar { data_type: wt, .. })
                        if wt.is_numeric() && !matches!(wt, DataType::Dictionary(..)) => {}
                    Some(_) => {
                        return err(format!(
                            "`weight` = \"{w}\": `{}.{w}` is not a number; weights are an integer, float or decimal field",
                            r.table
                        ));
                    }
                    None => {
                        return err(format!(
                            "`weight` = \"{w}\" is not a top-level field of table `{}`",
                            r.table
                        ));
                    }
                }
            }
            if parent.children_of.is_some() && r.pick != Pick::Parent {
                return err(format!(
                    "`ref` reads `{}`, a child table (rows per `{}` row), whose rows cannot be drawn by index; reference its parent table",
                    r.table,
                    parent
                        .children_of
                        .as_ref()
                        .map_or("", |c| c.parent.as_str())
                ));
            }
            if parent.rows == Some(Rows::Fixed(0)) {
                return err(format!(
                    "`ref` reads table `{}`, which has no rows (`rows = 0`); a reference needs a row to draw",
                    r.table
                ));
            }
            edges[ti].push((pi, path.clone(), f.line));
        }
        check_vias(p, tname, &t.spec.fields)?;
        if let Some(c) = &t.children_of
            && let Some(pi) = names.iter().position(|n| *n == c.parent)
        {
            edges[ti].push((pi, tname.clone(), t.line));
        }
    }
    // A depth-first search for a cycle: 0 unvisited, 1 on the stack, 2 done.
    fn visit(
        i: usize,
        edges: &[Vec<(usize, String, usize)>],
        state: &mut [u8],
        stack: &mut Vec<usize>,
    ) -> Option<Vec<usize>> {
        state[i] = 1;
        stack.push(i);
        for (j, _, _) in &edges[i] {
            if state[*j] == 1 {
                let from = stack.iter().position(|x| x == j).unwrap_or(0);
                let mut cycle = stack[from..].to_vec();
                cycle.push(*j);
                return Some(cycle);
            }
            if state[*j] == 0
                && let Some(c) = visit(*j, edges, state, stack)
            {
                return Some(c);
            }
        }
        stack.pop();
        state[i] = 2;
        None
    }
    let mut state = vec![0u8; tables.len()];
    for i in 0..tables.len() {
        if state[i] == 0
            && let Some(cycle) = visit(i, &edges, &mut state, &mut Vec::new())
        {
            let (a, b) = (cycle[0], cycle[1]);
            let (_, path, line) = edges[a]
                .iter()
                .find(|(j, _, _)| *j == b)
                .cloned()
                .unwrap_or_default();
            // A `children_of` edge names the table, not a field.
            let path = (path != names[a]).then_some(path);
            let shown: Vec<&str> = cycle.iter().map(|&k| names[k]).collect();
            let message = if cycle.len() == 2 {
                format!(
                    "table `{}` references itself (or is a child of itself); a reference reads another table",
                    names[a]
                )
            } else {
                format!(
                    "tables reference each other in a cycle ({}); references must lead from children to parents",
                    shown.join(" -> ")
                )
            };
            return Err(p.err_at(line, path.as_deref(), message));
        }
    }
    Ok(())
}

/// Checks every `aggregate`: a top-level field whose table is a child
/// table of its own, over a top-level field of it whose type the
/// operation takes, into a field of the type it gives.
fn check_aggregates(p: &P<'_>, tables: &[Table]) -> Result<(), SpecError> {
    for t in tables {
        let tname = &t.spec.name;
        let mut fields: Vec<(&Field, bool)> = Vec::new();
        fn walk<'f>(f: &'f Field, top: bool, out: &mut Vec<(&'f Field, bool)>) {
            out.push((f, top));
            match &f.kind {
                Kind::Struct(c) => c.iter().for_each(|x| walk(x, false, out)),
                Kind::List { item, .. } => walk(item, false, out),
                Kind::Map { key, value, .. } => {
                    walk(key, false, out);
                    walk(value, false, out);
                }
                Kind::Scalar { .. } => {}
            }
        }
        for f in &t.spec.fields {
            walk(f, true, &mut fields);
        }
        for (f, top) in fields {
            let Kind::Scalar {
                data_type,
                generator: Generator::Aggregate(a),
            } = &f.kind
            else {
                if f.when
                    .iter()
                    .any(|w| matches!(w.generator, Some(Generator::Aggregate(_))))
                {
                    return Err(p.err_at(
                        f.line,
                        Some(&format!("{tname}.{}", f.path)),
                        "a `when` case cannot give an `aggregate`",
                    ));
                }
                continue;
            };
            let path = format!("{tname}.{}", f.path);
            let err = |m: String| Err(p.err_at(f.line, Some(&path), m));
            if !top {
                return err("an `aggregate` is for top-level fields".into());
            }
            let Some(child) = tables.iter().find(|c| c.spec.name == a.table) else {
                return err(format!(
                    "`aggregate` names table `{}`, which the dataset does not have",
                    a.table
                ));
            };
            if child.children_of.as_ref().map(|c| &c.parent) != Some(tname) {
                return err(format!(
                    "`aggregate` reads the children of each row: table `{}` is not a child table of `{tname}` (give it `children_of = \"{tname}\"`)",
                    a.table
                ));
            }
            let source = match &a.field {
                None => None,
                Some(name) => {
                    let Some(cf) = child.spec.fields.iter().find(|c| &c.name == name) else {
                        return err(format!(
                            "table `{}` has no top-level field `{name}`",
                            a.table
                        ));
                    };
                    match &cf.kind {
                        Kind::Scalar { data_type, .. } => Some(data_type.clone()),
                        _ => return err(format!("`{}.{name}` is not a leaf field", a.table)),
                    }
                }
            };
            let decimal = |d: &DataType| matches!(d, DataType::Decimal128(..));
            let numeric = |d: &DataType| d.is_integer() || d.is_floating() || decimal(d);
            let ok = match (a.op, &source) {
                (AggOp::Count, _) => data_type.is_integer(),
                (_, None) => false,
                // Integer sums are exact, into an integer or a decimal
                // (`uint64` sums may pass `i64::MAX`).
                (AggOp::Sum, Some(s)) => {
                    (s.is_integer() && (data_type.is_integer() || decimal(data_type)))
                        || (s.is_floating() && data_type.is_floating())
                        || (decimal(s) && decimal(data_type))
                }
                (AggOp::Min | AggOp::Max, Some(s)) => {
                    (numeric(s) || matches!(s, DataType::Date32 | DataType::Utf8))
                        && (s == data_type
                            || (s.is_integer() && data_type.is_integer())
                            || (decimal(s) && decimal(data_type)))
                }
                (AggOp::All | AggOp::Any, Some(s)) => {
                    *s == DataType::Boolean && *data_type == DataType::Boolean
                }
            };
            if !ok {
                return err(format!(
                    "type mismatch: {} of {} cannot fill a field of type {data_type}",
                    a.op.as_str(),
                    source.map_or("rows".to_string(), |s| s.to_string())
                ));
            }
        }
    }
    Ok(())
}

/// The fields of a calendar table that lists none: every part of the
/// day, named after it.
fn calendar_fields(line: usize) -> Vec<Field> {
    CalendarPart::ALL
        .iter()
        .map(|(name, part)| {
            let data_type = match part {
                CalendarPart::Date => DataType::Date32,
                CalendarPart::DayName | CalendarPart::MonthName => DataType::Utf8,
                CalendarPart::Weekend => DataType::Boolean,
                _ => DataType::Int32,
            };
            Field {
                name: name.to_string(),
                path: name.to_string(),
                line,
                kind: Kind::Scalar {
                    data_type,
                    generator: Generator::Calendar(*part),
                },
                null_rate: 0.0,
                nullable: false,
                parquet_dictionary: None,
                when: Vec::new(),
            }
        })
        .collect()
}

/// Checks where the generators that read the row number stand: a
/// `calendar` part only in a calendar table, and both it and
/// `values_by_row` only in top-level fields of a table with rows of its
/// own (not a child table's, whose row numbers have gaps, nor inside
/// lists); a list of values shorter than a table of a fixed row count
/// needs `cycle`.
fn check_row_generators(p: &P<'_>, tables: &[Table]) -> Result<(), SpecError> {
    for t in tables {
        let tname = &t.spec.name;
        check_row_fields(p, &t.spec.fields, Some(t)).map_err(|mut e| {
            e.field = e.field.take().map(|f| format!("{tname}.{f}"));
            e
        })?;
    }
    Ok(())
}

/// [`check_row_generators`] for the fields of one table (`None`: a plain
/// spec).
fn check_row_fields(p: &P<'_>, fields: &[Field], table: Option<&Table>) -> Result<(), SpecError> {
    fn go(p: &P<'_>, f: &Field, top: bool, table: Option<&Table>) -> Result<(), SpecError> {
        let err = |m: String| Err(p.err_at(f.line, Some(&f.path), m));
        match &f.kind {
            Kind::Scalar {
                generator,
                data_type,
            } => {
                let gens = std::iter::once(generator)
                    .chain(f.when.iter().filter_map(|w| w.generator.as_ref()));
                for g in gens {
                    // A child's position, `start + k` for its `k`-th
                    // child, reaches `start + max_count - 1`.
                    if let Generator::Position(start) = g
                        && let Some(c) = table.and_then(|t| t.children_of.as_ref())
                        && let Some((_, hi)) = Class::of(data_type).int_range()
                        && start + i128::from(c.max_count()) - 1 > hi
                    {
                        return err(format!(
                            "the `per_parent` sequence from {start} would reach {} for up to {} children per `{}` row, past {hi}, the greatest {data_type}; use a wider type or a smaller start",
                            start + i128::from(c.max_count()) - 1,
                            c.max_count(),
                            c.parent
                        ));
                    }
                    let what = match g {
                        Generator::ByRow { .. } => "`values_by_row`",
                        Generator::Calendar(_) => "`calendar`",
                        _ => continue,
                    };
                    if !top {
                        return err(format!(
                            "{what} gives each row a value: it is for top-level fields, not those inside lists or maps"
                        ));
                    }
                    if table.is_some_and(|t| t.children_of.is_some()) {
                        return err(format!(
                            "{what} is for tables with rows of their own; a child table's rows follow its parent's (use `sequence = {{ per_parent = true }}` to number them)"
                        ));
                    }
                    if let Generator::Calendar(_) = g
                        && table.is_none_or(|t| t.calendar.is_none())
                    {
                        return err(
                            "`calendar` reads the day of a calendar table's row; give the table `calendar = { start = ..., end = ... }`"
                                .into(),
                        );
                    }
                    if let Generator::ByRow {
                        values,
                        cycle: false,
                    } = g
                        && let Some(Rows::Fixed(n)) = table.and_then(|t| t.rows)
                        && (values.len() as u64) < n
                    {
                        return err(format!(
                            "`values_by_row` has {} values but the table has {n} rows; give one value per row, or `cycle = true` to start the list again",
                            values.len()
                        ));
                    }
                }
                Ok(())
            }
            // A struct's fields share its row.
            Kind::Struct(children) => children.iter().try_for_each(|c| go(p, c, top, table)),
            Kind::List { item, .. } => go(p, item, false, table),
            Kind::Map { key, value, .. } => {
                go(p, key, false, table)?;
                go(p, value, false, table)
            }
        }
    }
    fields.iter().try_for_each(|f| go(p, f, true, table))
}

/// Checks each child table's `children_of` and makes the `parent`
/// references of its fields name that table; `parent` and `position` are
/// for the top-level fields of child tables only.
fn fill_parents(p: &P<'_>, tables: &mut [Table]) -> Result<(), SpecError> {
    let names: Vec<String> = tables.iter().map(|t| t.spec.name.clone()).collect();
    for t in tables.iter_mut() {
        let tname = t.spec.name.clone();
        if let Some(c) = &t.children_of
            && !names.contains(&c.parent)
        {
            return Err(p.err_at(
                t.line,
                None,
                format!(
                    "table `{tname}`: `children_of` names table `{}`, which the dataset does not have; its tables are {}",
                    c.parent,
                    names.join(", ")
                ),
            ));
        }
        let parent = t.children_of.as_ref().map(|c| c.parent.clone());
        each_field_mut(&mut t.spec.fields, true, &mut |f, top| {
            let path = format!("{tname}.{}", f.path);
            let Kind::Scalar { generator, .. } = &mut f.kind else {
                return Ok(());
            };
            let what = match generator {
                Generator::Reference(r) if r.pick == Pick::Parent => "`parent`",
                Generator::Position(_) => "a `per_parent` sequence (`position`)",
                _ => return Ok(()),
            };
            let Some(parent) = &parent else {
                return Err(p.err_at(
                    f.line,
                    Some(&path),
                    format!(
                        "{what} is for the fields of a child table; table `{tname}` has no `children_of`"
                    ),
                ));
            };
            if !top {
                return Err(p.err_at(
                    f.line,
                    Some(&path),
                    format!(
                        "{what} is for the top-level fields of a child table, not those inside structs, lists or maps"
                    ),
                ));
            }
            if let Generator::Reference(r) = generator {
                r.table = parent.clone();
            }
            Ok(())
        })?;
    }
    Ok(())
}

/// Gives each reference what it copies besides values: the Arrow type of
/// a dictionary, struct, list or map declared by its kind alone (see
/// [`placeholder_of`]), and nullability when the copied field is nullable
/// (the copy of a null is null). Repeated until nothing changes, for
/// copies of copies. A kind that differs from the copied field's is left
/// for the type check to report.
fn copy_from_references(tables: &mut [Table]) {
    loop {
        let copied: std::collections::HashMap<(String, String), (DataType, bool)> = tables
            .iter()
            .flat_map(|t| {
                t.spec.fields.iter().map(|f| {
                    (
                        (t.spec.name.clone(), f.name.clone()),
                        (kind_type(&f.kind), f.nullable),
                    )
                })
            })
            .collect();
        let mut changed = false;
        for t in tables.iter_mut() {
            let _ = each_field_mut(&mut t.spec.fields, true, &mut |f, _| {
                let Field { kind, nullable, .. } = f;
                let Kind::Scalar {
                    data_type,
                    generator: Generator::Reference(r),
                } = kind
                else {
                    return Ok::<(), ()>(());
                };
                if let Some((ty, copied_nullable)) = copied.get(&(r.table.clone(), r.field.clone()))
                {
                    if placeholder_of(data_type, ty) {
                        *data_type = ty.clone();
                        changed = true;
                    }
                    if *copied_nullable && !*nullable {
                        *nullable = true;
                        changed = true;
                    }
                }
                Ok(())
            });
        }
        if !changed {
            break;
        }
    }
}

/// Checks each `via` of the references among `fields` and, below them,
/// in their structs: it names a sibling whose generator is a reference
/// (without a `via` of its own) to the same table.
fn check_vias(p: &P<'_>, table: &str, fields: &[Field]) -> Result<(), SpecError> {
    for f in fields {
        match &f.kind {
            Kind::Scalar {
                generator: Generator::Reference(r),
                ..
            } => {
                let Some(via) = &r.via else { continue };
                let path = format!("{table}.{}", f.path);
                let err = |m: String| Err(p.err_at(f.line, Some(&path), m));
                let sibling = fields.iter().find(|s| &s.name == via);
                match sibling.map(|s| &s.kind) {
                    Some(Kind::Scalar {
                        generator: Generator::Reference(sr),
                        ..
                    }) if sr.via.is_none()
                        && sr.table == r.table
                        && sibling
                            .is_some_and(|s| s.when.iter().all(|w| w.generator.is_none())) => {}
                    Some(Kind::Scalar {
                        generator: Generator::Reference(sr),
                        ..
                    }) if sr.via.is_none() && sr.table == r.table => {
                        return err(format!(
                            "`via` = \"{via}\": that reference draws its row by cases; copy the fields of its row with cases of your own"
                        ));
                    }
                    Some(Kind::Scalar {
                        generator: Generator::Reference(sr),
                        ..
                    }) if sr.table == r.table => {
                        return err(format!(
                            "`via` = \"{via}\" has a `via` itself; name the sibling that draws the row"
                        ));
                    }
                    Some(_) => {
                        return err(format!(
                            "`via` = \"{via}\": that sibling is not a reference to table `{}`",
                            r.table
                        ));
                    }
                    None => {
                        return err(format!(
                            "`via` = \"{via}\" names no sibling of this field; it names a field beside it holding a reference to `{}`",
                            r.table
                        ));
                    }
                }
            }
            Kind::Struct(children) => check_vias(p, table, children)?,
            Kind::List { item, .. } => check_vias(p, table, std::slice::from_ref(item))?,
            Kind::Map { key, value, .. } => {
                check_vias(p, table, std::slice::from_ref(key))?;
                check_vias(p, table, std::slice::from_ref(value))?;
            }
            Kind::Scalar { .. } => {}
        }
    }
    Ok(())
}

/// A data type as a spec spells it (for messages).
fn type_text(dt: &DataType) -> String {
    match dt {
        DataType::Boolean => "boolean".into(),
        DataType::Utf8 => "utf8".into(),
        DataType::LargeUtf8 => "large_utf8".into(),
        DataType::Date32 => "date32".into(),
        DataType::Decimal128(p, s) | DataType::Decimal256(p, s) => format!("decimal({p}, {s})"),
        DataType::Timestamp(u, tz) => {
            let u = match u {
                TimeUnit::Second => "s",
                TimeUnit::Millisecond => "ms",
                TimeUnit::Microsecond => "us",
                TimeUnit::Nanosecond => "ns",
            };
            match tz {
                Some(z) => format!("timestamp({u}, {z})"),
                None => format!("timestamp({u})"),
            }
        }
        DataType::Null => "a dictionary".into(),
        DataType::Struct(f) if f.is_empty() => "a struct".into(),
        DataType::Dictionary(..) => "a dictionary".into(),
        DataType::Struct(_) => "a struct".into(),
        DataType::List(_) => "a list".into(),
        DataType::Map(..) => "a map".into(),
        other => other.to_string().to_ascii_lowercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Arrow type the parser gives a field (for references to it) is
    /// the one the engine builds, for every field of every preset.
    #[test]
    fn kind_types_are_the_engines() {
        use crate::BatchGenerator;
        for (name, _) in crate::PRESETS {
            let spec = Spec::preset(name).unwrap();
            let schema = spec.generator(1).unwrap().schema();
            for (f, arrow) in spec.fields.iter().zip(schema.fields()) {
                assert_eq!(&kind_type(&f.kind), arrow.data_type(), "{name}.{}", f.name);
            }
        }
    }

    #[test]
    fn civil_days() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(days_from_civil(1969, 12, 31), -1);
        assert_eq!(parse_date("2024-02-29"), Some(19_782));
    }

    #[test]
    fn integers_in_every_radix() {
        assert_eq!(int_of("1_000", 10), Some(1000));
        assert_eq!(int_of("-5", 10), Some(-5));
        assert_eq!(int_of("0xff", 16), Some(255));
        assert_eq!(int_of("ff", 16), Some(255));
    }
}
