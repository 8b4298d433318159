//! What a spec is: its fields, kinds, generators, values and cases, as parsed and checked.

use std::fmt;

use arrow_schema::DataType;

use super::template::Template;

/// A parsed and checked dataset spec.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    /// The dataset name (file stem and `strata.preset` metadata).
    pub name: String,
    /// Free text.
    pub description: Option<String>,
    /// Top-level fields, in schema order.
    pub fields: Vec<Field>,
}

/// A dataset of one table or several: a spec file with `[[tables]]`,
/// or a single-table [`Spec`] (then its one table has no row count of its
/// own).
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    /// The dataset name.
    pub name: String,
    /// Free text.
    pub description: Option<String>,
    /// The tables, in file order.
    pub tables: Vec<Table>,
    /// Whether the file listed `[[tables]]` (else it is a plain spec, and
    /// its output keeps the single-table layout).
    pub multi_table: bool,
}

/// One table of a [`Dataset`].
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// The table's fields, as a spec named after the table.
    pub spec: Spec,
    /// The line the table starts on.
    pub line: usize,
    /// Its row count (`None` for a plain spec: the caller says).
    pub rows: Option<Rows>,
}

/// A table's row count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rows {
    /// This many rows at every scale (a dimension such as regions).
    Fixed(u64),
    /// This many rows per unit of the scale factor.
    PerScale(f64),
}

impl Rows {
    /// The row count at `scale`: `per_scale * scale` rounded to the
    /// nearest integer (halves away from zero) for [`Rows::PerScale`].
    pub fn at(self, scale: f64) -> u64 {
        match self {
            Rows::Fixed(n) => n,
            Rows::PerScale(r) => {
                let n = (r * scale).round();
                if n >= u64::MAX as f64 {
                    u64::MAX
                } else {
                    n.max(0.0) as u64
                }
            }
        }
    }
}

/// One field of a spec.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The Arrow field name.
    pub name: String,
    /// Dotted path from the top (`phones.item.number`), used in messages
    /// and to key the field's random stream.
    pub path: String,
    /// The spec line the field starts on (0 for fields made in code).
    pub line: usize,
    /// What the field holds.
    pub kind: Kind,
    /// Share of null values in `0..=1`.
    pub null_rate: f64,
    /// Whether the Arrow field is nullable: true when any case can make it
    /// null, or when the spec says so.
    pub nullable: bool,
    /// Parquet dictionary encoding for this leaf; `None` lets the writer
    /// decide from the field's cardinality.
    pub parquet_dictionary: Option<bool>,
    /// Cases that replace the null rate or generator when a sibling field
    /// has a given value; the first that matches wins.
    pub when: Vec<When>,
}

/// The shape of a field.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// A leaf of Arrow type `data_type`, drawn by `generator`.
    Scalar {
        /// Boolean, integer, float, string, binary, dictionary, date or
        /// timestamp.
        data_type: DataType,
        /// How values are drawn.
        generator: Generator,
    },
    /// A struct of child fields.
    Struct(Vec<Field>),
    /// A list of `item`s, `length` of them per value.
    List {
        /// The element field (named `item`).
        item: Box<Field>,
        /// Elements per list: an integer generator.
        length: Generator,
        /// Lists drawn with no elements are null instead of empty.
        empty_as_null: bool,
    },
    /// A map with `length` entries per value.
    Map {
        /// The key field (never null).
        key: Box<Field>,
        /// The value field.
        value: Box<Field>,
        /// Entries per map: an integer generator.
        length: Generator,
    },
}

/// A value in a spec, already checked against its field's type.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A boolean.
    Bool(bool),
    /// An integer, a date (days since 1970-01-01) or a timestamp (units
    /// since the epoch).
    Int(i128),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x}"),
            Value::Str(s) => write!(f, "{s:?}"),
        }
    }
}

/// How a leaf's values (or a list's lengths) are drawn.
#[derive(Debug, Clone, PartialEq)]
pub enum Generator {
    /// Always this value.
    Constant(Value),
    /// `start + step * index`, where the index is the row number for
    /// top-level fields and `parent_index * max_length + position` inside
    /// lists and maps: unique, with gaps, as long as the row times the
    /// product of the enclosing lists' most lengths stays below 2^64 (the
    /// index wraps past that).
    Sequence {
        /// The first value.
        start: Value,
        /// The increment.
        step: Value,
    },
    /// Uniform between `min` and `max` (inclusive for integers, dates and
    /// timestamps; `[min, max)` for floats).
    Uniform {
        /// The least value.
        min: Value,
        /// The greatest value.
        max: Value,
    },
    /// Normal with this mean and standard deviation, clamped to
    /// `[min, max]` when given and rounded for integer types.
    Normal {
        /// Mean.
        mean: f64,
        /// Standard deviation (> 0).
        std: f64,
        /// Lower clamp.
        min: Option<f64>,
        /// Upper clamp.
        max: Option<f64>,
    },
    /// Zipf over ranks `1..=n` (`P(k) ∝ k^-s`): the value is
    /// `values[k - 1]`, or `start + k - 1` for numbers without values.
    Zipf {
        /// Exponent (> 0).
        s: f64,
        /// Ranks.
        n: u64,
        /// Value of each rank, most frequent first.
        values: Option<Vec<Value>>,
        /// Value of rank 1 when there are no `values` (default 1).
        start: i128,
    },
    /// One of `values`, with probability proportional to its weight.
    Weighted {
        /// The categories.
        values: Vec<Value>,
        /// Non-negative weights, one per value.
        weights: Vec<f64>,
    },
    /// `true` with this probability.
    Probability(f64),
    /// A string template such as `+91-99-{seq:08}`.
    Template(Template),
    /// `min..=max` words from a list, joined by spaces.
    Words {
        /// The vocabulary.
        list: WordList,
        /// Fewest words.
        min: u32,
        /// Most words.
        max: u32,
    },
    /// The value of a top-level field of a row of another table of the
    /// same [`Dataset`], the row drawn by `pick`: a foreign key when the
    /// field is that table's key, a copied attribute otherwise.
    Reference(Reference),
}

/// A [`Generator::Reference`]: which table and field, and how rows are
/// drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    /// The parent table's name.
    pub table: String,
    /// A top-level field of the parent table.
    pub field: String,
    /// How the parent row is drawn.
    pub pick: Pick,
    /// A sibling field holding a reference to the same table whose row
    /// this one reads too (to copy several fields of one parent row);
    /// `pick` is then that sibling's.
    pub via: Option<String>,
}

/// How a [`Reference`] draws a row of its parent table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pick {
    /// Every row equally likely.
    Uniform,
    /// Zipf over the rows with exponent `s`: the rank-`k` row is row
    /// `((k - 1) * m + o) mod rows` for a multiplier `m` coprime with the
    /// row count and an offset `o` drawn once per field and seed, so the
    /// most referenced rows are spread over the table (and over its parts)
    /// rather than all at its start.
    Zipf {
        /// Exponent (> 0).
        s: f64,
    },
}

/// A parameter as a person reads it: plain decimals, but exponent
/// notation for the very large and the very small (`1e300`, not 301
/// digits).
struct Num(f64);

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let a = self.0.abs();
        if a != 0.0 && a.is_finite() && !(1e-4..1e16).contains(&a) {
            write!(f, "{:e}", self.0)
        } else {
            write!(f, "{}", self.0)
        }
    }
}

impl fmt::Display for Generator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |vs: &[Value]| {
            let shown: Vec<String> = vs.iter().take(4).map(Value::to_string).collect();
            let more = if vs.len() > 4 {
                format!(", ... {} in all", vs.len())
            } else {
                String::new()
            };
            format!("[{}{more}]", shown.join(", "))
        };
        match self {
            Generator::Constant(v) => write!(f, "constant {v}"),
            Generator::Sequence { start, step } => write!(f, "sequence from {start} by {step}"),
            Generator::Uniform { min, max } => write!(f, "uniform {min}..{max}"),
            Generator::Normal {
                mean,
                std,
                min,
                max,
            } => {
                write!(f, "normal mean {} std {}", Num(*mean), Num(*std))?;
                if let Some(m) = min {
                    write!(f, " min {}", Num(*m))?;
                }
                if let Some(m) = max {
                    write!(f, " max {}", Num(*m))?;
                }
                Ok(())
            }
            Generator::Zipf {
                s,
                n,
                values,
                start,
            } => match values {
                Some(v) => write!(f, "zipf s {} over {}", Num(*s), list(v)),
                None => write!(
                    f,
                    "zipf s {} over {start}..{}",
                    Num(*s),
                    *start + i128::from(*n) - 1
                ),
            },
            Generator::Weighted { values, weights } => {
                let sum: f64 = weights.iter().sum();
                let shares: Vec<String> = values
                    .iter()
                    .zip(weights)
                    .take(4)
                    .map(|(v, w)| format!("{v} {:.1}%", 100.0 * w / sum))
                    .collect();
                let more = if values.len() > 4 {
                    format!(", ... {} in all", values.len())
                } else {
                    String::new()
                };
                write!(f, "weighted [{}{more}]", shares.join(", "))
            }
            Generator::Probability(p) => write!(f, "true with probability {}", Num(*p)),
            Generator::Template(t) => write!(f, "template {:?}", t.source()),
            Generator::Words { list, min, max } => {
                write!(f, "{min} to {max} {}", list.as_str())
            }
            Generator::Reference(r) => {
                write!(f, "reference to {}.{}", r.table, r.field)?;
                if let Some(v) = &r.via {
                    return write!(f, ", the row of {v}");
                }
                match r.pick {
                    Pick::Uniform => write!(f, ", rows uniform"),
                    Pick::Zipf { s } => write!(f, ", rows zipf s {}", Num(s)),
                }
            }
        }
    }
}

impl fmt::Display for When {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.condition {
            Condition::Is(vs) => {
                let vs: Vec<String> = vs.iter().map(Value::to_string).collect();
                write!(f, "when {} is {}", self.field, vs.join(" or "))?;
            }
            Condition::IsNull(true) => write!(f, "when {} is null", self.field)?,
            Condition::IsNull(false) => write!(f, "when {} is not null", self.field)?,
        }
        if let Some(r) = self.null_rate {
            write!(f, ": null {r}")?;
        }
        if let Some(g) = &self.generator {
            write!(f, ": {g}")?;
        }
        Ok(())
    }
}

/// The JSON Schema of spec files (the TOML document read as JSON).
pub const JSON_SCHEMA: &str = include_str!("../../spec.schema.json");

/// The built-in vocabularies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WordList {
    /// Common English words.
    Words,
    /// Given names.
    FirstNames,
    /// Family names.
    LastNames,
}

impl WordList {
    /// The spec spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            WordList::Words => "words",
            WordList::FirstNames => "first_names",
            WordList::LastNames => "last_names",
        }
    }
}

/// A case of a field that depends on a sibling.
#[derive(Debug, Clone, PartialEq)]
pub struct When {
    /// The sibling field's name.
    pub field: String,
    /// The line of the case.
    pub line: usize,
    /// When the case applies.
    pub condition: Condition,
    /// The null rate in this case (else the field's own).
    pub null_rate: Option<f64>,
    /// The generator in this case (else the field's own).
    pub generator: Option<Generator>,
}

/// The test a [`When`] case applies to its sibling.
#[derive(Debug, Clone, PartialEq)]
pub enum Condition {
    /// The sibling holds one of these values.
    Is(Vec<Value>),
    /// The sibling is null (`true`) or not (`false`).
    IsNull(bool),
}

/// A spec error: the place and what is wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct SpecError {
    /// The spec's file name or preset name.
    pub origin: String,
    /// 1-based line (0 when unknown).
    pub line: usize,
    /// 1-based column, for TOML syntax errors.
    pub column: Option<usize>,
    /// The dotted path of the field, when the error is in one.
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.origin)?;
        if self.line > 0 {
            write!(f, ":{}", self.line)?;
            if let Some(c) = self.column {
                write!(f, ":{c}")?;
            }
        }
        write!(f, ": ")?;
        if let Some(p) = &self.field {
            write!(f, "field `{p}`: ")?;
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for SpecError {}

/// The embedded presets: `(name, spec text)`.
pub const PRESETS: &[(&str, &str)] = &[
    ("contacts", include_str!("../../specs/contacts.toml")),
    ("wide-u64", include_str!("../../specs/wide-u64.toml")),
    ("events", include_str!("../../specs/events.toml")),
    ("lineitem", include_str!("../../specs/lineitem.toml")),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_read_as_decimals_or_in_exponent_notation() {
        let zipf = |s| Generator::Zipf {
            s,
            n: 10,
            values: None,
            start: 1,
        };
        assert_eq!(zipf(1.1).to_string(), "zipf s 1.1 over 1..10");
        assert_eq!(zipf(1e300).to_string(), "zipf s 1e300 over 1..10");
        assert_eq!(zipf(2.5e-7).to_string(), "zipf s 2.5e-7 over 1..10");
        let normal = Generator::Normal {
            mean: -30.0,
            std: 0.0001,
            min: Some(1e20),
            max: None,
        };
        assert_eq!(normal.to_string(), "normal mean -30 std 0.0001 min 1e20");
        assert_eq!(
            Generator::Probability(0.0).to_string(),
            "true with probability 0"
        );
    }
}
