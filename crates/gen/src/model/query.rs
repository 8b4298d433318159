//! What the checks, the engine and the expected shares read off the
//! model: the values and lengths a generator can yield, what a field is
//! computed from, the Arrow type of a field's kind.

use arrow_schema::DataType;

use super::{
    CalendarPart, ChildrenOf, Condition, Expression, Field, Generator, Kind, Reference, Spec, Value,
};
use crate::facts::{DAY_NAMES, MAX_LENGTH, MONTH_NAMES};

/// How many ids `0, 1, ...` a sequence from `start` by `step` keeps
/// within `(least, greatest)`: `n` for ids `0..n`, or `None` when it never
/// leaves them (a step of 0).
pub(crate) fn sequence_ids(start: i128, step: i128, (lo, hi): (i128, i128)) -> Option<u128> {
    let room = match step.cmp(&0) {
        std::cmp::Ordering::Greater => hi.checked_sub(start)?,
        std::cmp::Ordering::Less => start.checked_sub(lo)?,
        std::cmp::Ordering::Equal => return None,
    };
    if room < 0 {
        return Some(0);
    }
    Some((room / step.checked_abs()?) as u128 + 1)
}

/// The most elements a length generator can yield.
pub(crate) fn max_length(g: &Generator) -> u64 {
    let m = match g {
        Generator::Constant(v) => int_of_value(v),
        Generator::Uniform { max, .. } => int_of_value(max),
        Generator::Normal { max, .. } => max.map_or(MAX_LENGTH, |m| m.floor() as i128),
        Generator::Zipf {
            values, n, start, ..
        } => match values {
            Some(v) => v.iter().map(int_of_value).max().unwrap_or(0),
            None => start + *n as i128 - 1,
        },
        Generator::Weighted { values, .. } => values.iter().map(int_of_value).max().unwrap_or(0),
        _ => MAX_LENGTH,
    };
    m.clamp(0, MAX_LENGTH) as u64
}

impl ChildrenOf {
    /// The most rows a parent row can have (at least 1): child `k` of
    /// parent row `p` has index `p * max_count() + k`.
    pub fn max_count(&self) -> u64 {
        self.count_when
            .iter()
            .map(|c| max_length(&c.count))
            .fold(max_length(&self.count), u64::max)
            .max(1)
    }
}

fn int_of_value(v: &Value) -> i128 {
    match v {
        Value::Int(i) => *i,
        _ => 0,
    }
}

/// The values a dictionary generator draws from, in key order.
pub(crate) fn dictionary_values(g: &Generator) -> Option<&[Value]> {
    match g {
        Generator::Weighted { values, .. }
        | Generator::Zipf {
            values: Some(values),
            ..
        } => Some(values),
        Generator::Constant(v) => Some(std::slice::from_ref(v)),
        _ => None,
    }
}

/// The values of a categorical generator, in category order (a
/// dictionary field's values, by key).
pub(crate) fn category_values(g: &Generator) -> Option<Vec<Value>> {
    let names = |n: &[&str]| n.iter().map(|s| Value::Str(s.to_string())).collect();
    Some(match g {
        Generator::Probability(_) | Generator::Calendar(CalendarPart::Weekend) => {
            vec![Value::Bool(false), Value::Bool(true)]
        }
        Generator::Calendar(CalendarPart::DayName) => names(&DAY_NAMES),
        Generator::Calendar(CalendarPart::MonthName) => names(&MONTH_NAMES),
        Generator::ByRow { values, .. } => distinct_values(values).0,
        g => dictionary_values(g)?.to_vec(),
    })
}

/// The distinct values of `values` in first-seen order, and for each
/// value the index of its distinct value.
pub(crate) fn distinct_values(values: &[Value]) -> (Vec<Value>, Vec<u32>) {
    let mut seen: std::collections::HashMap<String, u32> = Default::default();
    let mut distinct = Vec::new();
    let keys = values
        .iter()
        .map(|v| {
            *seen.entry(format!("{v:?}")).or_insert_with(|| {
                distinct.push(v.clone());
                distinct.len() as u32 - 1
            })
        })
        .collect();
    (distinct, keys)
}

/// The values of a categorical generator the engine encodes as categories
/// (at most 255), in category order.
pub(crate) fn categories(g: &Generator) -> Option<Vec<Value>> {
    category_values(g).filter(|v| v.len() <= 255)
}

/// The SQL of `f`: its `when` cases' conditions, then its `expr`.
pub(crate) fn expressions(f: &Field) -> impl Iterator<Item = &Expression> {
    let conditions = f.when.iter().filter_map(|w| match &w.condition {
        Condition::Expr(e) => Some(e),
        _ => None,
    });
    let own = match &f.kind {
        Kind::Scalar {
            generator: Generator::Expr(e),
            ..
        } => Some(&**e),
        _ => None,
    };
    conditions.chain(own)
}

/// The references of `f`: its generator's and its cases'.
pub(crate) fn field_references(f: &Field) -> impl Iterator<Item = &Reference> {
    let generator = match &f.kind {
        Kind::Scalar { generator, .. } => Some(generator),
        _ => None,
    };
    let cases = f.when.iter().filter_map(|w| w.generator.as_ref());
    generator.into_iter().chain(cases).filter_map(|g| match g {
        Generator::Reference(r) => Some(r),
        _ => None,
    })
}

/// The siblings `f` is computed from: those its `when` cases read and
/// those its expressions read (a field's cases are all conditions, or all
/// read one sibling).
pub(crate) fn depends_on(f: &Field) -> Vec<&str> {
    let mut out: Vec<&str> = f
        .when
        .iter()
        .filter(|w| !matches!(w.condition, Condition::Expr(_)))
        .map(|w| w.field.as_str())
        .collect();
    out.extend(expressions(f).flat_map(|e| e.inputs.iter().map(String::as_str)));
    out
}

/// The Arrow type of a field of kind `kind`, as the engine builds it.
pub(crate) fn kind_type(kind: &Kind) -> DataType {
    let field = |f: &Field| arrow_schema::Field::new(&f.name, kind_type(&f.kind), f.nullable);
    match kind {
        Kind::Scalar { data_type, .. } => data_type.clone(),
        Kind::Struct(children) => DataType::Struct(children.iter().map(field).collect()),
        Kind::List { item, .. } => DataType::List(std::sync::Arc::new(field(item))),
        Kind::Map { key, value, .. } => DataType::Map(
            std::sync::Arc::new(arrow_schema::Field::new(
                "entries",
                DataType::Struct(vec![field(key), field(value)].into()),
                false,
            )),
            false,
        ),
    }
}

/// Whether `f` is an aggregate of its table's children.
pub(crate) fn is_aggregate(f: &Field) -> bool {
    matches!(
        f.kind,
        Kind::Scalar {
            generator: Generator::Aggregate(_),
            ..
        }
    )
}

/// Every field of `spec` (at any depth) whose generator, or a case's, is
/// a reference, with that reference.
pub(crate) fn references(spec: &Spec) -> Vec<(&Field, &Reference)> {
    spec.walk()
        .into_iter()
        .flat_map(|(f, _)| field_references(f).map(move |r| (f, r)))
        .collect()
}

/// Calls `f` on every field of `fields` and, below each, on those of its
/// struct, list or map, depth first, with whether it is a table's
/// top-level field (`top` for `fields` themselves).
pub(crate) fn each_field_mut<E>(
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
