//! A field's generator: the one generator key of a field or a case,
//! read and checked against the field's class.

use std::ops::Range;

use toml::de::{DeTable, DeValue};

use super::reader::{P, Sp, distribution_message, get, is_plain_name};
use crate::dist::{Alias, Zipf};
use crate::model::class::Class;
use crate::model::{
    AggOp, Aggregate, CalendarPart, Expression, Generator, Pick, Reference, SpecError, Value,
    WordList,
};
use crate::template::Template;

pub(super) const GENERATORS: &[&str] = crate::model::document::GENERATOR_KEYS;

impl<'s> P<'s> {
    /// The one generator key of table `t`, if any.
    pub(super) fn generator<'i>(
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
    pub(super) fn offset(
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
}
