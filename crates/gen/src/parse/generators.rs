//! A field's generator: the one generator key of a field, a case, a
//! length or a count, read from its document type and checked against
//! the field's class.

use std::ops::Range;

use super::reader::{P, V, distribution_message, is_plain_name};
use crate::dist::{Alias, Zipf};
use crate::model::class::Class;
use crate::model::document::Raw;
use crate::model::document::{
    self as doc, At, CyclingValues, ListName, Loose, ParentOffset, RowSequence, Scalar, Shape, Tab,
    WordFile,
};
use crate::model::{
    AggOp, Aggregate, CalendarPart, Expression, Generator, Pick, Reference, SpecError, Value,
    WordList,
};
use crate::template::Template;

pub(super) const GENERATORS: &[&str] = crate::model::document::GENERATOR_KEYS;

/// The generator keys of a document table, each as written (absent
/// where the table's type does not take it).
#[derive(Default)]
pub(super) struct Gens<'a> {
    constant: Option<&'a Loose<Scalar>>,
    sequence: Option<&'a At<Shape<RowSequence>>>,
    uniform: Option<&'a At<Shape<doc::Uniform>>>,
    normal: Option<&'a At<Shape<doc::Normal>>>,
    lognormal: Option<&'a At<Shape<doc::Lognormal>>>,
    quantiles: Option<&'a At<Shape<doc::QuantileTable>>>,
    zipf: Option<&'a At<Shape<doc::Zipf>>>,
    weighted: Option<&'a At<Shape<doc::Weighted>>>,
    probability: Option<&'a Loose<f64>>,
    template: Option<&'a Loose<String>>,
    words: Option<&'a At<Shape<doc::Words>>>,
    chars: Option<&'a At<Shape<doc::Chars>>>,
    text: Option<&'a At<Shape<doc::Text>>>,
    reference: Option<&'a At<Shape<doc::Reference>>>,
    parent: Option<&'a At<Shape<ParentOffset>>>,
    position: Option<&'a Loose<i64>>,
    uuid: Option<&'a Loose<bool>>,
    values_by_row: Option<&'a At<Shape<CyclingValues>>>,
    calendar: Option<&'a Loose<CalendarPart>>,
    expr: Option<&'a Loose<String>>,
    aggregate: Option<&'a At<Shape<doc::Aggregate>>>,
}

/// A generator key's value as `Gens` holds it: a loose value as it is,
/// a table without the type the schema gives it.
trait Part {
    type Out: ?Sized;
    fn part(&self) -> &Self::Out;
}

impl<S> Part for Loose<S> {
    type Out = Loose<S>;
    fn part(&self) -> &Loose<S> {
        self
    }
}

impl<T, S> Part for Tab<T, S> {
    type Out = At<Shape<T>>;
    fn part(&self) -> &At<Shape<T>> {
        &self.at
    }
}

/// `Gens` of a document type, from the generator keys it has.
macro_rules! gens_of {
    ($($t:ty => [$($k:ident),*];)*) => {$(
        impl<'a> From<&'a $t> for Gens<'a> {
            // The types with every generator key fill them all.
            #[allow(clippy::needless_update)]
            fn from(t: &'a $t) -> Self {
                Gens {
                    $($k: t.$k.as_ref().map(Part::part),)*
                    ..Gens::default()
                }
            }
        }
    )*};
}

gens_of! {
    doc::Field => [constant, sequence, uniform, normal, lognormal, quantiles, zipf, weighted,
        probability, template, words, chars, text, reference, parent, position, uuid, values_by_row,
        calendar, expr, aggregate];
    doc::When => [constant, sequence, uniform, normal, lognormal, quantiles, zipf, weighted,
        probability, template, words, chars, text, reference, parent, position, uuid, values_by_row,
        calendar, expr, aggregate];
    doc::Draw => [constant, uniform, normal, zipf, weighted];
    doc::CountDraw => [constant, uniform, normal, zipf, weighted];
    doc::CountCase => [constant, uniform, normal, zipf, weighted];
}

/// The value of an optional key, or the error naming what is missing.
fn need<S>(v: &Option<Loose<S>>, missing: impl FnOnce() -> SpecError) -> Result<&V, SpecError> {
    v.as_ref().map(|l| &l.at).ok_or_else(missing)
}

impl<'s> P<'s> {
    /// The one generator key of the table written at `at`, if any.
    pub(super) fn generator(
        &self,
        gens: Gens<'_>,
        at: &Range<usize>,
        class: Class,
        field: Option<&str>,
    ) -> Result<Option<Generator>, SpecError> {
        let present: Vec<&(String, Range<usize>)> = self
            .keys(at)
            .iter()
            .filter(|(k, _)| GENERATORS.contains(&k.as_str()))
            .collect();
        let (name, key_span) = match present.as_slice() {
            [] => return Ok(None),
            [one] => (one.0.as_str(), one.1.clone()),
            [a, b, ..] => {
                return Err(self.err(
                    b.1.clone(),
                    field,
                    format!("has both `{}` and `{}`; give one generator", a.0, b.0),
                ));
            }
        };
        // Where the value is written (the key, for a key the table's type
        // does not take).
        let span = match name {
            "constant" => gens.constant.map(|v| v.span()),
            "sequence" => gens.sequence.map(|t| t.span.clone()),
            "uniform" => gens.uniform.map(|t| t.span.clone()),
            "normal" => gens.normal.map(|t| t.span.clone()),
            "lognormal" => gens.lognormal.map(|t| t.span.clone()),
            "quantiles" => gens.quantiles.map(|t| t.span.clone()),
            "zipf" => gens.zipf.map(|t| t.span.clone()),
            "weighted" => gens.weighted.map(|t| t.span.clone()),
            "probability" => gens.probability.map(|v| v.span()),
            "template" => gens.template.map(|v| v.span()),
            "words" => gens.words.map(|t| t.span.clone()),
            "chars" => gens.chars.map(|t| t.span.clone()),
            "text" => gens.text.map(|t| t.span.clone()),
            "ref" => gens.reference.map(|t| t.span.clone()),
            "parent" => gens.parent.map(|t| t.span.clone()),
            "position" => gens.position.map(|v| v.span()),
            "uuid" => gens.uuid.map(|v| v.span()),
            "values_by_row" => gens.values_by_row.map(|t| t.span.clone()),
            "calendar" => gens.calendar.map(|v| v.span()),
            "expr" => gens.expr.map(|v| v.span()),
            "aggregate" => gens.aggregate.map(|t| t.span.clone()),
            _ => None,
        }
        .unwrap_or(key_span);
        let bad = |msg: String| self.err(span.clone(), field, msg);
        let kind = match class {
            Class::Bool => "boolean",
            Class::Int { .. } => "integer",
            Class::Float => "float",
            Class::Str => "string",
            Class::Dict => "dictionary",
            Class::Date => "date",
            Class::Timestamp(_) => "timestamp",
            Class::Time(_) => "time",
            Class::Decimal { .. } => "decimal",
        };
        let unsupported = || bad(format!("`{name}` does not generate {kind} values"));
        let missing = || bad(format!("`{name}` is not taken here"));
        let needs = |k: &str| bad(format!("`{name}` needs `{k}`"));
        let what = format!("`{name}`");
        let g = match name {
            "constant" => {
                let v = gens.constant.ok_or_else(missing)?;
                Generator::Constant(self.run_value(v, class, field, name)?)
            }
            "sequence" => {
                if !class.numeric() {
                    return Err(unsupported());
                }
                let p = self.params(
                    gens.sequence.ok_or_else(missing)?,
                    field,
                    &what,
                    &["start", "step", "per_parent"],
                )?;
                let per_parent = p
                    .per_parent
                    .as_ref()
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
                    if let Some(st) = &p.step {
                        return Err(self.err(
                            st.span(),
                            field,
                            "a `per_parent` sequence steps by 1 (`step` is for plain sequences)",
                        ));
                    }
                    let start = match &p.start {
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
                let step_class = class.step();
                let start = match &p.start {
                    Some(s) => self.run_value(s, class, field, "start")?,
                    None if class == Class::Float => Value::Float(0.0),
                    None => Value::Int(match class {
                        Class::Int { min, max } => 0i128.clamp(min, max),
                        _ => 0,
                    }),
                };
                let step = match &p.step {
                    Some(s) => self.run_value(s, step_class, field, "step")?,
                    None if class == Class::Float => Value::Float(1.0),
                    None => Value::Int(1),
                };
                Generator::Sequence { start, step }
            }
            "uniform" => {
                if !class.numeric() {
                    return Err(unsupported());
                }
                let p = self.params(
                    gens.uniform.ok_or_else(missing)?,
                    field,
                    &what,
                    &["min", "max"],
                )?;
                let min = self.run_value(need(&p.min, || needs("min"))?, class, field, "min")?;
                let max = self.run_value(need(&p.max, || needs("max"))?, class, field, "max")?;
                if !Value::uniform_bounds(&min, &max) {
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
                let p = self.params(
                    gens.normal.ok_or_else(missing)?,
                    field,
                    &what,
                    &["mean", "std", "min", "max"],
                )?;
                let mean = self.number(need(&p.mean, || needs("mean"))?, field, "mean")?;
                let std = self.number(need(&p.std, || needs("std"))?, field, "std")?;
                if !(std > 0.0 && std.is_finite()) {
                    return Err(bad(format!(
                        "normal needs a positive standard deviation, not {std}"
                    )));
                }
                if !mean.is_finite() {
                    return Err(bad(format!("normal needs a finite mean, not {mean}")));
                }
                let (min, max) = self.clamps(name, &p.min, &p.max, class, field, &bad)?;
                if let Class::Decimal { scale, max: most } = class
                    && !(mean * class.unit()).is_finite()
                {
                    return Err(bad(format!(
                        "normal's min and max leave no value in the decimal's range (at most {most} units of 10^-{scale})"
                    )));
                }
                Generator::Normal {
                    mean,
                    std,
                    min,
                    max,
                }
            }
            "lognormal" => {
                if !matches!(
                    class,
                    Class::Int { .. } | Class::Float | Class::Decimal { .. }
                ) {
                    return Err(unsupported());
                }
                let p = self.params(
                    gens.lognormal.ok_or_else(missing)?,
                    field,
                    &what,
                    &["mu", "sigma", "min", "max"],
                )?;
                let mu = self.number(need(&p.mu, || needs("mu"))?, field, "mu")?;
                let sigma = self.number(need(&p.sigma, || needs("sigma"))?, field, "sigma")?;
                if !(sigma > 0.0 && sigma.is_finite()) {
                    return Err(bad(format!(
                        "lognormal needs a positive `sigma` (the logarithm's standard deviation), not {sigma}"
                    )));
                }
                if !mu.is_finite() {
                    return Err(bad(format!("lognormal needs a finite `mu`, not {mu}")));
                }
                let (min, max) = self.clamps(name, &p.min, &p.max, class, field, &bad)?;
                Generator::Lognormal {
                    mu,
                    sigma,
                    min,
                    max,
                }
            }
            "quantiles" => {
                let dated = matches!(class, Class::Date | Class::Timestamp(_));
                if !(dated
                    || matches!(
                        class,
                        Class::Int { .. } | Class::Float | Class::Decimal { .. } | Class::Time(_)
                    ))
                {
                    return Err(unsupported());
                }
                // A list, or `{ values = [...], weekdays = [...] }`.
                let t = gens.quantiles.ok_or_else(missing)?;
                let (list, key, weekdays) = match &t.value {
                    Shape::Table(_) => {
                        let p = self.params(t, field, &what, &["values", "weekdays"])?;
                        let values = need(&p.values, || needs("values"))?.clone();
                        (values, "values", p.weekdays.as_ref())
                    }
                    Shape::Value(v) => (
                        doc::At {
                            span: t.span.clone(),
                            value: v.clone(),
                        },
                        name,
                        None,
                    ),
                };
                let points = self.quantile_points(&list, class, field, key)?;
                let weekdays = match weekdays {
                    None => None,
                    Some(w) if !dated => {
                        return Err(self.err(
                            w.span(),
                            field,
                            format!(
                                "`weekdays` moves dates and timestamps within their week, not {kind} values"
                            ),
                        ));
                    }
                    Some(w) => Some(self.weekdays(w, field)?),
                };
                Generator::Quantiles { points, weekdays }
            }
            "zipf" => {
                if class == Class::Bool {
                    return Err(unsupported());
                }
                let p = self.params(
                    gens.zipf.ok_or_else(missing)?,
                    field,
                    &what,
                    &["s", "n", "values", "start"],
                )?;
                let s = self.number(need(&p.s, || needs("s"))?, field, "s")?;
                let values = p
                    .values
                    .as_ref()
                    .map(|vs| self.values(vs, class, field, "values"))
                    .transpose()?;
                let n = match (&p.n, &values) {
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
                let start = match (&p.start, &values, class) {
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
                let p = self.params(
                    gens.weighted.ok_or_else(missing)?,
                    field,
                    &what,
                    &["values", "weights"],
                )?;
                let values =
                    self.values(need(&p.values, || needs("values"))?, class, field, "values")?;
                let weights = match &p.weights {
                    None => vec![1.0; values.len()],
                    Some(w) => {
                        let Raw::Array(items) = w.raw() else {
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
                Generator::Probability(self.rate(
                    gens.probability.ok_or_else(missing)?,
                    field,
                    name,
                )?)
            }
            "template" => {
                if class != Class::Str {
                    return Err(unsupported());
                }
                let s = self.string(gens.template.ok_or_else(missing)?, field, name)?;
                Generator::Template(Template::parse(&s).map_err(bad)?)
            }
            "words" => {
                if class != Class::Str {
                    return Err(unsupported());
                }
                let p = self.params(
                    gens.words.ok_or_else(missing)?,
                    field,
                    &what,
                    &["list", "values", "distinct", "min", "max"],
                )?;
                let distinct = p
                    .distinct
                    .as_ref()
                    .map(|d| self.boolean(d, field, "distinct"))
                    .transpose()?
                    .unwrap_or(false);
                let (list, own) =
                    self.word_source(p.list.as_ref(), p.values.as_ref(), field, name)?;
                let (min, max) = self.min_max(&p.min, &p.max, field)?;
                if min < 0 || max < min || max > 1000 {
                    return Err(bad(format!(
                        "words needs 0 <= min <= max <= 1000, not min {min} and max {max}"
                    )));
                }
                let available = match &own {
                    Some(w) => w.len(),
                    None => list.table().len(),
                };
                if distinct && max as usize > available {
                    return Err(bad(format!(
                        "words draws up to {max} distinct words, but the list has {available}"
                    )));
                }
                Generator::Words {
                    list,
                    own,
                    distinct,
                    min: min as u32,
                    max: max as u32,
                }
            }
            "text" => {
                if class != Class::Str {
                    return Err(unsupported());
                }
                let p = self.params(
                    gens.text.ok_or_else(missing)?,
                    field,
                    &what,
                    &["list", "values", "size", "min", "max"],
                )?;
                let (list, own) =
                    self.word_source(p.list.as_ref(), p.values.as_ref(), field, name)?;
                if let Some(w) = own.iter().flatten().find(|w| !w.is_ascii()) {
                    return Err(bad(format!(
                        "text's words are ASCII (its windows are cut at any byte), not \"{w}\""
                    )));
                }
                let size = match &p.size {
                    Some(v) => self.integer(v, field, "size")?,
                    None => 1 << 20,
                };
                let (min, max) = self.min_max(&p.min, &p.max, field)?;
                if !(1..=1 << 28).contains(&size) {
                    return Err(bad(format!(
                        "text's `size` is 1 to 268435456 characters, not {size}"
                    )));
                }
                if min < 0 || max < min || max > size {
                    return Err(bad(format!(
                        "text needs 0 <= min <= max <= size ({size}), not min {min} and max {max}"
                    )));
                }
                Generator::Text {
                    list,
                    own,
                    size: size as u32,
                    min: min as u32,
                    max: max as u32,
                }
            }
            "chars" => {
                if class != Class::Str {
                    return Err(unsupported());
                }
                let p = self.params(
                    gens.chars.ok_or_else(missing)?,
                    field,
                    &what,
                    &["alphabet", "min", "max"],
                )?;
                let text =
                    self.string(need(&p.alphabet, || needs("alphabet"))?, field, "alphabet")?;
                let alphabet: Vec<char> = text.chars().collect();
                let mut sorted = alphabet.clone();
                sorted.sort_unstable();
                if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
                    return Err(bad(format!(
                        "the alphabet holds {:?} twice; each character once (every one is equally likely)",
                        w[0]
                    )));
                }
                if alphabet.is_empty() {
                    return Err(bad("the alphabet is empty".into()));
                }
                let (min, max) = self.min_max(&p.min, &p.max, field)?;
                if min < 0 || max < min || max > 65_536 {
                    return Err(bad(format!(
                        "chars needs 0 <= min <= max <= 65536, not min {min} and max {max}"
                    )));
                }
                Generator::Chars {
                    alphabet,
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
                let p = self.params(
                    gens.reference.ok_or_else(missing)?,
                    field,
                    &what,
                    &[
                        "table", "field", "zipf", "weight", "via", "draw", "offset", "balanced",
                    ],
                )?;
                let table = self.string(need(&p.table, || needs("table"))?, field, "table")?;
                let target = self.string(need(&p.field, || needs("field"))?, field, "field")?;
                // `balanced = false` is the default, uniform pick.
                let balanced = match &p.balanced {
                    Some(b) => self.boolean(b, field, "balanced")?.then_some(b),
                    None => None,
                };
                if let Some(b) = balanced {
                    let given = [
                        ("zipf", p.zipf.is_some()),
                        ("weight", p.weight.is_some()),
                        ("via", p.via.is_some()),
                    ];
                    if let Some((other, _)) = given.into_iter().find(|(_, g)| *g) {
                        return Err(self.err(
                            b.span(),
                            field,
                            format!(
                                "`ref` takes `balanced` (every row referenced equally often) or `{other}`, not both"
                            ),
                        ));
                    }
                }
                let pick = match (&p.zipf, &p.weight) {
                    _ if balanced.is_some() => Pick::Balanced,
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
                        let zt = self.params(&z.at, field, "`ref`'s `zipf`", &["s"])?;
                        let s = match &zt.s {
                            Some(s) => self.number(s, field, "s")?,
                            None => return Err(bad("`ref`'s `zipf` needs `s`".into())),
                        };
                        Zipf::check(s, 1).map_err(|e| bad(distribution_message(e)))?;
                        Pick::Zipf { s }
                    }
                };
                let via = p
                    .via
                    .as_ref()
                    .map(|v| self.string(v, field, "via"))
                    .transpose()?;
                if via.is_some() && pick != Pick::Uniform {
                    return Err(bad(
                        "`ref` takes `via` (the row of a sibling's reference) or `zipf`/`weight`, not both"
                            .into(),
                    ));
                }
                let draw = p
                    .draw
                    .as_ref()
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
                let offset = self.offset(p.offset.as_ref(), class, field)?;
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
                let t = gens.parent.ok_or_else(missing)?;
                let (target, offset) = match &t.value {
                    Shape::Value(v @ doc::Raw::Str(_)) => {
                        let v = doc::At {
                            span: t.span.clone(),
                            value: v.clone(),
                        };
                        (self.string(&v, field, name)?, None)
                    }
                    _ => {
                        let p = self.params(t, field, &what, &["field", "offset"])?;
                        let target =
                            self.string(need(&p.field, || needs("field"))?, field, "field")?;
                        (target, self.offset(p.offset.as_ref(), class, field)?)
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
                if !self.boolean(gens.uuid.ok_or_else(missing)?, field, name)? {
                    return Err(bad("`uuid` takes `true` (or leave it out)".into()));
                }
                Generator::Uuid
            }
            "position" => {
                let Class::Int { min, max } = class else {
                    return Err(unsupported());
                };
                let start = self.integer(gens.position.ok_or_else(missing)?, field, name)?;
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
                let p = self.params(gens.aggregate.ok_or_else(missing)?, field, &what, &keys)?;
                let table = self.string(need(&p.table, || needs("table"))?, field, "table")?;
                let ops: Vec<(AggOp, &V)> = AggOp::ALL
                    .iter()
                    .filter_map(|(n, op)| {
                        let v = match *n {
                            "sum" => &p.sum,
                            "min" => &p.min,
                            "max" => &p.max,
                            "count" => &p.count,
                            "all" => &p.all,
                            "any" => &p.any,
                            _ => &None,
                        };
                        v.as_ref().map(|v| (*op, &v.at))
                    })
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
                let source = self.string(gens.expr.ok_or_else(missing)?, field, name)?;
                Generator::Expr(Box::new(Expression::pending(source)))
            }
            "values_by_row" => {
                // A list, or `{ values = [...], cycle = true }`.
                let t = gens.values_by_row.ok_or_else(missing)?;
                let (list, cycle) = match &t.value {
                    Shape::Table(_) => {
                        let p = self.params(t, field, &what, &["values", "cycle"])?;
                        let cycle = p
                            .cycle
                            .as_ref()
                            .map(|c| self.boolean(c, field, "cycle"))
                            .transpose()?
                            .unwrap_or(false);
                        (need(&p.values, || needs("values"))?.clone(), cycle)
                    }
                    Shape::Value(v) => (
                        doc::At {
                            span: t.span.clone(),
                            value: v.clone(),
                        },
                        false,
                    ),
                };
                let values = self.values(&list, class, field, name)?;
                Generator::ByRow { values, cycle }
            }
            "calendar" => {
                let s = self.string(gens.calendar.ok_or_else(missing)?, field, name)?;
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

    /// The clamps `min` and `max` of `normal` or `lognormal` (`name`):
    /// finite, in order, and leaving a value of the field's type
    /// between them.
    fn clamps(
        &self,
        name: &str,
        min: &Option<Loose<f64>>,
        max: &Option<Loose<f64>>,
        class: Class,
        field: Option<&str>,
        bad: &dyn Fn(String) -> SpecError,
    ) -> Result<(Option<f64>, Option<f64>), SpecError> {
        let min = min
            .as_ref()
            .map(|m| self.number(m, field, "min"))
            .transpose()?;
        let max = max
            .as_ref()
            .map(|m| self.number(m, field, "max"))
            .transpose()?;
        for (k, v) in [("min", min), ("max", max)] {
            if let Some(v) = v
                && !v.is_finite()
            {
                return Err(bad(format!("{name} needs a finite `{k}`, not {v}")));
            }
        }
        if let (Some(a), Some(b)) = (min, max)
            && a > b
        {
            return Err(bad(format!("{name} needs min <= max, not {a} and {b}")));
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
                    "{name}'s min and max leave no value in the type's range {tmin}..={tmax}"
                )));
            }
        }
        if let Class::Decimal { scale, max: most } = class {
            // Clamps in units of the scale, as the engine draws.
            let unit = class.unit();
            let top = most as f64;
            let lo = min.map_or(-top, |m| (m * unit).max(-top));
            let hi = max.map_or(top, |m| (m * unit).min(top));
            if lo.ceil() > hi.floor() {
                return Err(bad(format!(
                    "{name}'s min and max leave no value in the decimal's range (at most {most} units of 10^-{scale})"
                )));
            }
        }
        Ok((min, max))
    }

    /// The points of `quantiles` (`key`, written at `v`): at least two
    /// values of the field's class, finite and non-decreasing.
    fn quantile_points(
        &self,
        v: &V,
        class: Class,
        field: Option<&str>,
        key: &str,
    ) -> Result<Vec<Value>, SpecError> {
        let points = self.values(v, class, field, key)?;
        let Raw::Array(items) = &v.value else {
            unreachable!("`values` reads arrays only");
        };
        if points.len() < 2 {
            return Err(self.err(
                v.span(),
                field,
                format!(
                    "`{key}` needs at least 2 values (the least and the greatest), not {}",
                    points.len()
                ),
            ));
        }
        for (i, (p, item)) in points.iter().zip(items).enumerate() {
            if let Value::Float(x) = p
                && !x.is_finite()
            {
                return Err(self.err(
                    item.span(),
                    field,
                    format!("`{key}` holds {x} (value {i}); quantiles are finite numbers"),
                ));
            }
            let below = match (i.checked_sub(1).map(|j| &points[j]), p) {
                (Some(Value::Int(a)), Value::Int(b)) => b < a,
                (Some(Value::Float(a)), Value::Float(b)) => b < a,
                _ => false,
            };
            if below {
                return Err(self.err(
                    item.span(),
                    field,
                    format!(
                        "`{key}` decreases: {} (value {i}) is below {} (value {}); quantiles are non-decreasing",
                        self.written(item),
                        self.written(&items[i - 1]),
                        i - 1
                    ),
                ));
            }
        }
        if let (Some(Value::Float(a)), Some(Value::Float(b))) = (points.first(), points.last())
            && !(b - a).is_finite()
        {
            return Err(self.err(
                v.span(),
                field,
                format!("`{key}` spans more than the largest float ({a} to {b})"),
            ));
        }
        Ok(points)
    }

    /// The weights of Monday to Sunday of `quantiles`' `weekdays`.
    fn weekdays(&self, w: &Loose<Vec<f64>>, field: Option<&str>) -> Result<[f64; 7], SpecError> {
        let bad = |m: String| self.err(w.span(), field, m);
        let Raw::Array(items) = w.raw() else {
            return Err(bad(format!(
                "`weekdays` must be an array of 7 weights (Monday to Sunday), not {}",
                w.raw().kind()
            )));
        };
        let ws = items
            .iter()
            .map(|x| self.number(x, field, "weekdays"))
            .collect::<Result<Vec<_>, _>>()?;
        let Ok(days) = <[f64; 7]>::try_from(ws.as_slice()) else {
            return Err(bad(format!(
                "`weekdays` takes 7 weights (Monday to Sunday), not {}",
                ws.len()
            )));
        };
        Alias::check(&days).map_err(|e| bad(format!("`weekdays`: {}", distribution_message(e))))?;
        Ok(days)
    }

    /// A length range's `min` (default 1) and `max` (default `min`).
    fn min_max(
        &self,
        min: &Option<Loose<u64>>,
        max: &Option<Loose<u64>>,
        field: Option<&str>,
    ) -> Result<(i128, i128), SpecError> {
        let min = match min {
            Some(m) => self.integer(m, field, "min")?,
            None => 1,
        };
        let max = match max {
            Some(m) => self.integer(m, field, "max")?,
            None => min,
        };
        Ok((min, max))
    }

    /// The spec's own word lists (`lists = { colors = [...] }`): each a
    /// name other than a built-in list's, and words each once.
    pub(super) fn word_lists(
        &self,
        doc: &crate::model::document::Document,
    ) -> Result<std::collections::BTreeMap<String, Vec<String>>, SpecError> {
        let mut out = std::collections::BTreeMap::new();
        let Some(lists) = &doc.lists else {
            return Ok(out);
        };
        let Shape::Table(named) = lists.shape() else {
            return Err(self.err(
                lists.span(),
                None,
                "`lists` must be a table of word lists (`lists = { colors = [\"red\", \"blue\"] }`)",
            ));
        };
        for (name, list) in named {
            let what = format!("lists.{name}");
            if WordList::named(name).is_some() {
                return Err(self.err(
                    list.span(),
                    None,
                    format!("`{what}`: `{name}` is a built-in list; give yours another name"),
                ));
            }
            let words = match list.shape() {
                Shape::Value(raw) => {
                    let at = At {
                        span: list.span(),
                        value: raw.clone(),
                    };
                    self.own_words(&at, None, &what)?
                }
                Shape::Table(f) => self.file_words(f, list.span(), &what)?,
            };
            if words.is_empty() {
                return Err(self.err(list.span(), None, format!("`{what}` is empty")));
            }
            out.insert(name.clone(), words);
        }
        Ok(out)
    }

    /// The words of list `what` read from its `file`: a line each, blank
    /// lines and `#` comments skipped, each once.
    fn file_words(
        &self,
        f: &WordFile,
        span: Range<usize>,
        what: &str,
    ) -> Result<Vec<String>, SpecError> {
        self.check_keys(&span, &["file"], None, &format!("`{what}`"))?;
        let Some(file) = &f.file else {
            return Err(self.err(span, None, format!("`{what}` needs `file` (a path)")));
        };
        let path = self.string(file, None, "file")?;
        let text = match self.files {
            Some(read) => read(&path),
            None => Err(format!(
                "a list's file is read next to its spec file, and {} was not read from one",
                self.origin()
            )),
        }
        .map_err(|m| self.err(file.span(), None, format!("`{what}`: file `{path}`: {m}")))?;
        let words: Vec<String> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(str::to_string)
            .collect();
        self.each_once(words, file.span(), None, what)
    }

    /// Words listed each once (`values`, or one of the spec's `lists`).
    fn own_words(&self, v: &V, field: Option<&str>, key: &str) -> Result<Vec<String>, SpecError> {
        let words: Vec<String> = self
            .values(v, Class::Str, field, key)?
            .into_iter()
            .map(|w| match w {
                Value::Str(s) => s,
                other => other.to_string(),
            })
            .collect();
        self.each_once(words, v.span.clone(), field, key)
    }

    /// `words`, refused when one is there twice.
    fn each_once(
        &self,
        words: Vec<String>,
        span: Range<usize>,
        field: Option<&str>,
        key: &str,
    ) -> Result<Vec<String>, SpecError> {
        let mut sorted: Vec<&String> = words.iter().collect();
        sorted.sort();
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            return Err(self.err(
                span,
                field,
                format!(
                    "`{key}` lists \"{}\" twice; each word once (weights are not taken)",
                    w[0]
                ),
            ));
        }
        Ok(words)
    }

    /// The words of `words` or `text`: a built-in `list` (default
    /// `words`), one of the spec's `lists`, or the field's own `values`
    /// (each once), not both.
    fn word_source(
        &self,
        list: Option<&Loose<ListName>>,
        values: Option<&Loose<Vec<String>>>,
        field: Option<&str>,
        name: &str,
    ) -> Result<(WordList, Option<Vec<String>>), SpecError> {
        if let (Some(_), Some(v)) = (list, values) {
            return Err(self.err(
                v.span(),
                field,
                format!(
                    "`{name}` takes `list` (a built-in list or one of the spec's `lists`) or `values` (your own words), not both"
                ),
            ));
        }
        if let Some(v) = values {
            return Ok((WordList::Words, Some(self.own_words(v, field, "values")?)));
        }
        let Some(l) = list else {
            return Ok((WordList::Words, None));
        };
        let name = self.string(l, field, "list")?;
        if let Some(built_in) = WordList::named(&name) {
            return Ok((built_in, None));
        }
        Ok(match self.lists.get(&name) {
            Some(words) => (WordList::Words, Some(words.clone())),
            None => {
                let own: Vec<&str> = self.lists.keys().map(String::as_str).collect();
                let own = if own.is_empty() {
                    String::new()
                } else {
                    format!("; the spec's own lists are {}", own.join(", "))
                };
                let built_in: Vec<&str> = WordList::ALL.iter().map(|l| l.as_str()).collect();
                return Err(self.err(
                    l.span(),
                    field,
                    format!(
                        "unknown word list `{name}`; the built-in lists are {}{own}",
                        built_in.join(", ")
                    ),
                ));
            }
        })
    }

    /// The parameter table `t` of a generator (or another table called
    /// `what`), its keys checked against `allowed`.
    pub(super) fn params<'a, T>(
        &self,
        t: &'a At<Shape<T>>,
        field: Option<&str>,
        what: &str,
        allowed: &[&str],
    ) -> Result<&'a T, SpecError> {
        let table = self.table(t, field, what)?;
        self.check_keys(&t.span, allowed, field, what)?;
        Ok(table)
    }

    /// The `offset` of a reference: an integer generator in the field's
    /// units (days of dates, units of timestamps and decimals), for
    /// fields of those types only.
    pub(super) fn offset(
        &self,
        o: Option<&Tab<doc::Draw, doc::Offset>>,
        class: Class,
        field: Option<&str>,
    ) -> Result<Option<Box<Generator>>, SpecError> {
        let Some(o) = o else {
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
        if let Shape::Value(v @ doc::Raw::Int(_)) = o.shape() {
            let v = doc::At {
                span: o.span(),
                value: v.clone(),
            };
            return Ok(Some(Box::new(Generator::Constant(
                self.value(&v, units, field, "offset")?,
            ))));
        }
        let ot = self.params(
            &o.at,
            field,
            "`offset`",
            &["constant", "uniform", "normal", "zipf", "weighted"],
        )?;
        let g = self
            .generator(ot.into(), &o.span(), units, field)?
            .ok_or_else(|| self.err(o.span(), field, "`offset` needs a generator"))?;
        Ok(Some(Box::new(g)))
    }
}
