//! Spec values: a TOML value read as a value of a leaf's class (numbers,
//! strings, dates, times, decimals), alone or as an array.

use arrow_schema::TimeUnit;

use super::reader::{P, V};
use super::types::decimal_units;
use crate::dates::{days_from_civil, spec_date};
use crate::expr;
use crate::model::class::Class;
use crate::model::document::Raw;
use crate::model::expression::{ETy, NodeK};
use crate::model::{RunValue, SpecError, Value, units_per_second};

impl<'s> P<'s> {
    /// A value that may be computed once per run: for an integer, float
    /// or decimal leaf, a string (other than a decimal's own digits, such
    /// as "12.50") is SQL over literals, `scale()` and `rows('t')`
    /// (`max = "1000 * scale()"`), checked here and computed before the
    /// table compiles ([`Value::Run`]); anything else is [`Self::value`].
    pub(super) fn run_value(
        &self,
        v: &V,
        class: Class,
        field: Option<&str>,
        key: &str,
    ) -> Result<Value, SpecError> {
        let Raw::Str(source) = &v.value else {
            return self.value(v, class, field, key);
        };
        let digits = |t: &str| {
            let t = t.trim().trim_start_matches(['-', '+']);
            !t.is_empty() && t.chars().all(|c| c.is_ascii_digit() || c == '.')
        };
        match class {
            Class::Int { .. } | Class::Float => {}
            Class::Decimal { .. } if !digits(source) => {}
            _ => return self.value(v, class, field, key),
        }
        self.run_expr(v, source, field, key)
            .map(|r| Value::Run(Box::new(r)))
    }

    /// `source` (written at `v`) as a number computed once per run.
    pub(super) fn run_expr(
        &self,
        v: &V,
        source: &str,
        field: Option<&str>,
        key: &str,
    ) -> Result<RunValue, SpecError> {
        let bad = |m: String| self.err(v.span.clone(), field, format!("`{key}` = {source:?}: {m}"));
        let checked = expr::check_unless_qualified(source, &[], None)
            .map_err(|e| match e.message.strip_prefix("unknown name ") {
                Some(rest) => bad(format!(
                    "reads {}: a value computed once per run reads literals, scale() and rows('table'), not fields",
                    rest.split(';').next().unwrap_or(rest)
                )),
                None => bad(e.message),
            })?
            .ok_or_else(|| {
                bad("a value computed once per run reads literals, scale() and rows('table'), not another row's fields".into())
            })?;
        let tree = checked.0;
        if !matches!(tree.ty, ETy::Int | ETy::Float | ETy::Decimal(..)) {
            return Err(bad(format!("gives a {}, not a number", tree.ty.name())));
        }
        let mut draws = false;
        tree.clone().visit_mut(&mut |t| {
            draws |= matches!(t.kind, NodeK::Uniform { .. } | NodeK::UniformOf(..));
        });
        if draws {
            return Err(bad(
                "uniform() draws per row; a value computed once per run is one number for the whole run".into(),
            ));
        }
        Ok(RunValue {
            source: source.to_string(),
            line: self.line(v.span.start),
            key: key.to_string(),
            tree,
        })
    }

    /// A spec value as `class`, dates and timestamps checked against the
    /// range of their Arrow type (i32 days, i64 units).
    pub(super) fn value(
        &self,
        v: &V,
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
                v.span.clone(),
                field,
                format!("`{key}` = {i} is outside the {ty} range {lo}..={hi}"),
            ));
        }
        Ok(value)
    }

    pub(super) fn value_raw(
        &self,
        v: &V,
        class: Class,
        field: Option<&str>,
        key: &str,
    ) -> Result<Value, SpecError> {
        let bad = |msg: String| self.err(v.span.clone(), field, msg);
        let wrong = || {
            bad(format!(
                "`{key}` must be {}, not {}",
                class.describe(),
                v.value.kind()
            ))
        };
        match (class, &v.value) {
            (Class::Bool, Raw::Bool(b)) => Ok(Value::Bool(*b)),
            (Class::Int { min, max }, Raw::Int(i)) => {
                if *i < min || *i > max {
                    return Err(bad(format!(
                        "`{key}` = {i} is outside the type's range {min}..={max}"
                    )));
                }
                Ok(Value::Int(*i))
            }
            (Class::Float, Raw::Int(_) | Raw::Float(_)) => {
                Ok(Value::Float(self.number(v, field, key)?))
            }
            (Class::Str | Class::Dict, Raw::Str(s)) => Ok(Value::Str(s.clone())),
            (Class::Date | Class::Timestamp(_) | Class::Time(_), Raw::Int(i)) => Ok(Value::Int(*i)),
            (Class::Decimal { scale, .. }, Raw::Int(i)) => {
                // The digits as written, unless in another radix.
                let written = self.written(v);
                let text = if written.contains(['x', 'o', 'b']) {
                    i.to_string()
                } else {
                    written.to_string()
                };
                decimal_units(&text, scale)
                    .map(Value::Int)
                    .ok_or_else(|| bad(format!("`{key}` = {text} is too large for a decimal")))
            }
            (Class::Decimal { scale, .. }, x @ (Raw::Float(_) | Raw::Str(_))) => {
                // A float's digits as written, exactly; a string quoted.
                let (text, shown) = match x {
                    Raw::Float(_) => (self.written(v).to_string(), self.written(v).to_string()),
                    Raw::Str(t) => (t.clone(), format!("{t:?}")),
                    _ => return Err(wrong()),
                };
                decimal_units(&text, scale).map(Value::Int).ok_or_else(|| {
                    bad(format!(
                        "`{key}` = {shown} is not a decimal of at most {scale} digits after the point"
                    ))
                })
            }
            (Class::Date, Raw::Str(s)) => spec_date(s)
                .map(Value::Int)
                .ok_or_else(|| bad(format!("`{key}`: `{s}` is not a date like 2024-01-31"))),
            (Class::Date, Raw::Datetime(d)) => match (d.date, d.time) {
                (Some(date), None) => toml_days(date).map(Value::Int).ok_or_else(wrong),
                _ => Err(bad(format!("`{key}` must be a date without a time"))),
            },
            (Class::Time(unit), Raw::Datetime(d)) => match (d.date, d.time, d.offset) {
                (None, Some(t), None) => {
                    let (secs, nanos) = toml_time(t);
                    Ok(Value::Int(time_units(secs, nanos, unit)))
                }
                _ => Err(bad(format!(
                    "`{key}` must be a time of day without a date, such as 08:30:00"
                ))),
            },
            (Class::Timestamp(unit), Raw::Datetime(d)) => {
                let Some(date) = d.date else {
                    return Err(bad(format!("`{key}` needs a date")));
                };
                let days = toml_days(date).ok_or_else(wrong)?;
                let (mut secs, mut nanos) = (days * 86_400, 0i128);
                if let Some(t) = d.time {
                    let (s, n) = toml_time(t);
                    secs += s;
                    nanos = n;
                }
                if let Some(toml::value::Offset::Custom { minutes }) = d.offset {
                    secs -= i128::from(minutes) * 60;
                }
                Ok(Value::Int(time_units(secs, nanos, unit)))
            }
            _ => Err(wrong()),
        }
    }

    pub(super) fn values(
        &self,
        v: &V,
        class: Class,
        field: Option<&str>,
        key: &str,
    ) -> Result<Vec<Value>, SpecError> {
        let Raw::Array(items) = &v.value else {
            return Err(self.err(
                v.span.clone(),
                field,
                format!("`{key}` must be an array, not {}", v.value.kind()),
            ));
        };
        if items.is_empty() {
            return Err(self.err(v.span.clone(), field, format!("`{key}` is empty")));
        }
        items
            .iter()
            .map(|item| self.value(item, class, field, key))
            .collect()
    }
}

/// Days since 1970-01-01 of a TOML date (TOML checks the day exists).
fn toml_days(date: toml::value::Date) -> Option<i128> {
    days_from_civil(date.year.into(), date.month.into(), date.day.into())
}

/// Seconds since midnight and nanoseconds of a TOML time.
fn toml_time(t: toml::value::Time) -> (i128, i128) {
    let secs = i128::from(t.hour) * 3600 + i128::from(t.minute) * 60 + i128::from(t.second);
    (secs, t.nanosecond.into())
}

/// `secs` seconds and `nanos` nanoseconds in units of `unit`.
fn time_units(secs: i128, nanos: i128, unit: TimeUnit) -> i128 {
    let per = units_per_second(unit);
    secs * per + nanos * per / 1_000_000_000
}
