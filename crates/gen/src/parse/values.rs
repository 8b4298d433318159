//! Spec values: a TOML value read as a value of a leaf's class (numbers,
//! strings, dates, times, decimals), alone or as an array.

use arrow_schema::TimeUnit;
use toml::de::DeValue;

use super::reader::{P, Sp, kind_name};
use super::types::decimal_units;
use crate::model::class::Class;
use crate::model::{SpecError, Value, units_per_second};

impl<'s> P<'s> {
    /// A spec value as `class`, dates and timestamps checked against the
    /// range of their Arrow type (i32 days, i64 units).
    pub(super) fn value(
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

    pub(super) fn value_raw(
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

    pub(super) fn values(
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

pub(super) fn parse_date(s: &str) -> Option<i128> {
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
