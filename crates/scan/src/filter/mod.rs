//! Row filters: a boolean SQL expression over the file's top-level
//! columns, in the dialect of the spec's `expr` fields (described in the
//! guide: docs/src/commands/scan.md, under `--filter`, and
//! docs/src/spec/expressions.md).
//!
//! A [`Filter`] is parsed from text ([`Filter::parse`]) by strata-gen's
//! [`Predicate`] into `AND`, `OR` and `NOT` over clauses. Comparisons of
//! a column with a literal (`IN` lists and `BETWEEN` of literals among
//! them) are compared exactly for the column's type ([`Comparison`]);
//! `IS NULL` and `LIKE` run arrow's kernels; anything else is typed and
//! evaluated by the spec's checker and evaluator. A row matches when the
//! expression is true: null (a comparison with a null value) is no match.
//! Parquet row groups are skipped when the statistics prove, through the
//! comparisons, that no row matches ([`Filter::may_match_row_groups`]):
//! each filter column's statistics are read once for all the row groups
//! asked about, and each comparison judges them all in one pass.

mod comparison;
mod stats;

use std::{fmt, str::FromStr, sync::Arc};

use arrow_array::{
    ArrayRef, BooleanArray, LargeStringArray, RecordBatch, Scalar, StringArray, StringViewArray,
    cast::AsArray,
};
use arrow_schema::{DataType, Schema};
use parquet::file::metadata::RowGroupMetaData;
use strata_gen::{Clause, Predicate, PredicateError, SqlLiteral};

pub use comparison::{CmpOp, Comparison, Literal};

use crate::Error;
use stats::ColumnStats;

/// A row filter.
#[derive(Debug, Clone, PartialEq)]
pub struct Filter {
    /// The text as written.
    text: String,
    node: Node,
}

/// A filter's clauses, their comparisons read exactly.
type Node = Clause<Comparison>;

impl fmt::Display for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text.trim())
    }
}

impl FromStr for Filter {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Filter::parse(s)
    }
}

impl Filter {
    /// Parses a filter: a boolean SQL expression such as `age > 30`,
    /// `name = 'Ann' AND (score >= 2.5 OR score IS NULL)`,
    /// `city IN ('Oslo', 'Bergen')`, `day BETWEEN '2024-01-01' AND
    /// '2024-01-31'`, `name LIKE 'A%'` or `NOT flag = true`.
    ///
    /// Strings are in single quotes; a name in double quotes is a column
    /// (`"my col" = 3`), so `a < b` compares two columns.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidConfig`] showing the filter and the column in its
    /// text where it went wrong.
    pub fn parse(text: &str) -> Result<Filter, Error> {
        let p = Predicate::parse(text).map_err(|e| invalid(text, &e))?;
        Ok(Filter {
            text: text.to_string(),
            node: node(text, p.clause)?,
        })
    }

    /// Checks the filter against `schema`: its columns exist and its
    /// clauses can be evaluated on their types.
    ///
    /// # Errors
    ///
    /// [`Error::UnknownColumn`] for a missing column of a comparison,
    /// [`Error::InvalidConfig`] naming the problem otherwise.
    pub fn check(&self, schema: &Schema) -> Result<(), Error> {
        self.columns(schema).map(|_| ())
    }

    /// The columns the filter reads, each once, checked against `schema`
    /// as [`Filter::check`] does.
    ///
    /// # Errors
    ///
    /// As [`Filter::check`].
    pub fn columns(&self, schema: &Schema) -> Result<Vec<String>, Error> {
        let mut out = Vec::new();
        self.node.columns(&self.text, schema, &mut out)?;
        Ok(out)
    }

    /// Which rows of `batch` match: true where the filter is true, false
    /// where it is false or null (the result has no nulls).
    ///
    /// # Errors
    ///
    /// As [`Filter::check`] on the batch's schema; [`Error::Arrow`] when a
    /// kernel fails.
    pub fn evaluate(&self, batch: &RecordBatch) -> Result<BooleanArray, Error> {
        let mask = self.node.evaluate(&self.text, batch)?;
        Ok(comparison::nulls_to_false(mask))
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

    /// Whether any row of row group `rg` may match: one row group of
    /// [`Filter::may_match_row_groups`].
    pub fn may_match_row_group(
        &self,
        rg: &RowGroupMetaData,
        leaf: &dyn Fn(&str) -> Option<(usize, DataType)>,
    ) -> bool {
        self.may_match_row_groups(&[rg], leaf)[0]
    }

    /// Whether any row of each of `row_groups` may match, in their order.
    /// `leaf(column)` gives the Parquet leaf of a top-level column and its
    /// Arrow type (`None` when it has no single leaf). False only when the
    /// statistics prove that no row matches, through the comparisons the
    /// filter's `AND`, `OR` and `NOT` combine (see
    /// [`Comparison::may_match_row_groups`]). Each column's statistics are
    /// read once, for all of `row_groups`.
    pub fn may_match_row_groups(
        &self,
        row_groups: &[&RowGroupMetaData],
        leaf: &dyn Fn(&str) -> Option<(usize, DataType)>,
    ) -> Vec<bool> {
        let mut read = Vec::new();
        let mut out = self.node.may_match(row_groups, leaf, false, &mut read);
        for (o, rg) in out.iter_mut().zip(row_groups) {
            *o = *o && rg.num_rows() > 0;
        }
        out
    }
}

fn invalid(text: &str, e: &PredicateError) -> Error {
    Error::InvalidConfig(format!("invalid filter \"{text}\" {e}"))
}

/// The checker's error for a test of the filter. A name it stopped at that
/// is not a column gets a hint where the filter likely meant a value: a
/// name in double quotes (a string is in single quotes in SQL), or `inf`
/// or `nan` (infinity is a number beyond the float range).
fn bind_error(text: &str, schema: &Schema, e: &PredicateError) -> Error {
    let at: String = text
        .chars()
        .skip((e.column as usize).saturating_sub(1))
        .collect();
    let (name, quoted) = match at.strip_prefix('"') {
        Some(rest) => (quoted_name(rest), true),
        None => (
            at.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .next()
                .map(str::to_string),
            false,
        ),
    };
    let Some(name) = name.filter(|n| schema.field_with_name(n).is_err()) else {
        return invalid(text, e);
    };
    let hint = if quoted {
        format!(
            "a string is written in single quotes: '{}'",
            name.replace('\'', "''")
        )
    } else if ["inf", "infinity"]
        .iter()
        .any(|w| name.eq_ignore_ascii_case(w))
    {
        "infinity is written as a number beyond the float range: 1e400 (or -1e400)".to_string()
    } else if name.eq_ignore_ascii_case("nan") {
        "filters have no NaN literal".to_string()
    } else {
        return invalid(text, e);
    };
    let columns: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    Error::InvalidConfig(format!(
        "invalid filter \"{text}\" at column {}: there is no column \"{}\" (columns: {}); {hint}",
        e.column,
        name.replace('"', "\"\""),
        columns.join(", ")
    ))
}

/// The name in double quotes that `rest` (the text after the opening
/// quote) starts with, a doubled quote standing for one; `None` without
/// a closing quote.
fn quoted_name(rest: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '"' {
            if chars.peek() != Some(&'"') {
                return Some(out);
            }
            chars.next();
        }
        out.push(c);
    }
    None
}

/// The node of a clause: its comparisons' literals read exactly
/// ([`Literal::number`]).
fn node(text: &str, c: Clause) -> Result<Node, Error> {
    c.try_map(&mut |c: strata_gen::Comparison| {
        let value = match c.literal {
            SqlLiteral::Number(n) => Literal::number(&n).ok_or_else(|| {
                Error::InvalidConfig(format!("invalid filter \"{text}\": `{n}` is not a number"))
            })?,
            SqlLiteral::Str(s) => Literal::Str(s),
            SqlLiteral::Bool(b) => Literal::Bool(b),
        };
        Ok(Comparison {
            column: c.column,
            op: c.op,
            value,
        })
    })
}

fn unknown_column(schema: &Schema, name: &str) -> Error {
    Error::UnknownColumn {
        name: name.to_string(),
        available: schema.fields().iter().map(|f| f.name().clone()).collect(),
    }
}

/// The values a `LIKE` reads: the strings of a string column (of a
/// dictionary's values).
fn is_string(t: &DataType) -> bool {
    match t {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => true,
        DataType::Dictionary(_, v) => is_string(v),
        _ => false,
    }
}

fn push(out: &mut Vec<String>, name: &str) {
    if !out.iter().any(|n| n == name) {
        out.push(name.to_string());
    }
}

/// What a filter does with its clauses: the columns they read, their
/// rows' mask, and whether a row group may hold a match.
trait Clauses {
    fn columns(&self, text: &str, schema: &Schema, out: &mut Vec<String>) -> Result<(), Error>;
    fn evaluate(&self, text: &str, batch: &RecordBatch) -> Result<BooleanArray, Error>;
    fn may_match(
        &self,
        row_groups: &[&RowGroupMetaData],
        leaf: &dyn Fn(&str) -> Option<(usize, DataType)>,
        negated: bool,
        read: &mut Vec<(String, ColumnStats)>,
    ) -> Vec<bool>;
}

impl Clauses for Node {
    fn columns(&self, text: &str, schema: &Schema, out: &mut Vec<String>) -> Result<(), Error> {
        match self {
            Node::And(a, b) | Node::Or(a, b) => {
                a.columns(text, schema, out)?;
                b.columns(text, schema, out)?;
            }
            Node::Not(a) => a.columns(text, schema, out)?,
            Node::Compare(c) => {
                c.check(schema)?;
                push(out, &c.column);
            }
            Node::IsNull { column, .. } => {
                schema
                    .field_with_name(column)
                    .map_err(|_| unknown_column(schema, column))?;
                push(out, column);
            }
            Node::Like { column, .. } => {
                let field = schema
                    .field_with_name(column)
                    .map_err(|_| unknown_column(schema, column))?;
                if !is_string(field.data_type()) {
                    return Err(Error::InvalidConfig(format!(
                        "invalid filter \"{text}\": LIKE needs a string column, and '{column}' \
                         has type {}",
                        field.data_type()
                    )));
                }
                push(out, column);
            }
            Node::Test(t) => {
                let bound = t.bind(schema).map_err(|e| bind_error(text, schema, &e))?;
                for c in bound.columns() {
                    push(out, c);
                }
            }
        }
        Ok(())
    }

    /// The clause for each row (null where SQL's answer is null).
    fn evaluate(&self, text: &str, batch: &RecordBatch) -> Result<BooleanArray, Error> {
        use arrow_arith::boolean;
        Ok(match self {
            Node::And(a, b) => {
                boolean::and_kleene(&a.evaluate(text, batch)?, &b.evaluate(text, batch)?)?
            }
            Node::Or(a, b) => {
                boolean::or_kleene(&a.evaluate(text, batch)?, &b.evaluate(text, batch)?)?
            }
            Node::Not(a) => boolean::not(&a.evaluate(text, batch)?)?,
            Node::Compare(c) => c.evaluate_nullable(batch)?,
            Node::IsNull { column, negated } => {
                let a = batch
                    .column_by_name(column)
                    .ok_or_else(|| unknown_column(&batch.schema(), column))?;
                if *negated {
                    boolean::is_not_null(a.as_ref())?
                } else {
                    boolean::is_null(a.as_ref())?
                }
            }
            Node::Like {
                column,
                pattern,
                negated,
                case_insensitive,
            } => {
                let a = batch
                    .column_by_name(column)
                    .ok_or_else(|| unknown_column(&batch.schema(), column))?;
                like(a, pattern, *negated, *case_insensitive)?
            }
            Node::Test(t) => {
                let schema = batch.schema();
                let bound = t.bind(&schema).map_err(|e| bind_error(text, &schema, &e))?;
                bound
                    .evaluate(batch)
                    .map_err(|e| Error::InvalidConfig(format!("filter \"{text}\": {e}")))?
            }
        })
    }

    /// Whether a row of each of `row_groups` may make the clause true
    /// (`negated`: false). `read` keeps the statistics of the columns read
    /// so far.
    fn may_match(
        &self,
        row_groups: &[&RowGroupMetaData],
        leaf: &dyn Fn(&str) -> Option<(usize, DataType)>,
        negated: bool,
        read: &mut Vec<(String, ColumnStats)>,
    ) -> Vec<bool> {
        let both = |a: &Node, b: &Node, read: &mut Vec<_>, f: fn(bool, bool) -> bool| {
            let x = a.may_match(row_groups, leaf, negated, read);
            let y = b.may_match(row_groups, leaf, negated, read);
            x.into_iter().zip(y).map(|(x, y)| f(x, y)).collect()
        };
        match (self, negated) {
            // Kleene logic keeps De Morgan's laws.
            (Node::And(a, b), false) | (Node::Or(a, b), true) => both(a, b, read, |x, y| x && y),
            (Node::Or(a, b), false) | (Node::And(a, b), true) => both(a, b, read, |x, y| x || y),
            (Node::Not(a), _) => a.may_match(row_groups, leaf, !negated, read),
            (Node::Compare(c), _) => {
                let Some((at, t)) = leaf(&c.column) else {
                    return vec![true; row_groups.len()];
                };
                let k = match read.iter().position(|(name, _)| *name == c.column) {
                    Some(k) => k,
                    None => {
                        let stats = ColumnStats::read(row_groups, &c.column, at, &t);
                        read.push((c.column.clone(), stats));
                        read.len() - 1
                    }
                };
                // A null value makes neither `x OP v` nor its negation
                // true, and the negation of an operator is exact in the
                // total order the comparisons use.
                let flipped;
                let c = if negated {
                    flipped = Comparison {
                        op: negate(c.op),
                        ..c.clone()
                    };
                    &flipped
                } else {
                    c
                };
                c.may_match_stats(&read[k].1)
            }
            _ => vec![true; row_groups.len()],
        }
    }
}

fn negate(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Eq => CmpOp::NotEq,
        CmpOp::NotEq => CmpOp::Eq,
        CmpOp::Lt => CmpOp::GtEq,
        CmpOp::LtEq => CmpOp::Gt,
        CmpOp::Gt => CmpOp::LtEq,
        CmpOp::GtEq => CmpOp::Lt,
    }
}

/// `LIKE` of a string column (or a dictionary of strings) with `pattern`.
fn like(
    a: &ArrayRef,
    pattern: &str,
    negated: bool,
    case_insensitive: bool,
) -> Result<BooleanArray, Error> {
    if let Some(dict) = a.as_any_dictionary_opt() {
        let values = like(dict.values(), pattern, negated, case_insensitive)?;
        let taken = arrow_select::take::take(&values, dict.keys(), None)?;
        return Ok(taken.as_boolean().clone());
    }
    let p: ArrayRef = match a.data_type() {
        DataType::LargeUtf8 => Arc::new(LargeStringArray::from(vec![pattern])),
        DataType::Utf8View => Arc::new(StringViewArray::from(vec![pattern])),
        _ => Arc::new(StringArray::from(vec![pattern])),
    };
    let p = Scalar::new(p);
    use arrow_string::like as k;
    Ok(match (negated, case_insensitive) {
        (false, false) => k::like(a, &p)?,
        (true, false) => k::nlike(a, &p)?,
        (false, true) => k::ilike(a, &p)?,
        (true, true) => k::nilike(a, &p)?,
    })
}

#[cfg(test)]
mod tests {
    use super::comparison::tests::{
        Data, in_parquet, parquet_footer, random_data, random_filter, reference_may_match_row_group,
    };
    use super::*;
    use arrow_array::{Array, StringArray, TimestampMillisecondArray};
    use arrow_schema::{Field, TimeUnit};
    use strata_gen::rng::RowRng;

    /// SQL's answer for a row: `None` for null.
    type Tri = Option<bool>;
    type Truth<'a> = Box<dyn Fn(usize) -> Tri + 'a>;

    fn null_at(d: &Data, column: &str, i: usize) -> bool {
        match column {
            "f64" => d.floats[i].is_none(),
            "s" | "ds" => d.strs[i].is_none(),
            "b" => d.bools[i].is_none(),
            _ => d.ints[i].is_none(),
        }
    }

    fn like_matches(s: &[char], p: &[char]) -> bool {
        match p.first() {
            None => s.is_empty(),
            Some('%') => (0..=s.len()).any(|k| like_matches(&s[k..], &p[1..])),
            Some('_') => !s.is_empty() && like_matches(&s[1..], &p[1..]),
            Some(c) => s.first() == Some(c) && like_matches(&s[1..], &p[1..]),
        }
    }

    /// A random comparison (on `column` if given, with `op`), written as
    /// SQL, and its answer per row; `None` when none was found.
    fn comparison<'a>(
        rng: &mut RowRng,
        d: &'a Data,
        column: Option<&str>,
        op: Option<CmpOp>,
    ) -> Option<(Comparison, Truth<'a>)> {
        for _ in 0..2000 {
            let (c, check) = random_filter(rng, d);
            let finite = !matches!(c.value, Literal::Float(v) if !v.is_finite());
            if finite && column.is_none_or(|n| n == c.column) && op.is_none_or(|op| op == c.op) {
                let name = c.column.clone();
                let truth = move |i| (!null_at(d, &name, i)).then(|| check(i));
                return Some((c, Box::new(truth)));
            }
        }
        None
    }

    fn sql(c: &Comparison) -> String {
        format!("\"{}\" {} {}", c.column, c.op, c.value)
    }

    fn and(a: Tri, b: Tri) -> Tri {
        match (a, b) {
            (Some(false), _) | (_, Some(false)) => Some(false),
            (Some(true), Some(true)) => Some(true),
            _ => None,
        }
    }

    fn or(a: Tri, b: Tri) -> Tri {
        Some(!and(a.map(|v| !v), b.map(|v| !v))?)
    }

    /// A random filter of SQL clauses over [`random_data`]'s columns, and
    /// SQL's answer per row.
    fn random_sql<'a>(rng: &mut RowRng, d: &'a Data, depth: u32) -> (String, Truth<'a>) {
        let pick = if depth == 0 {
            3 + rng.next_below(7)
        } else {
            rng.next_below(10)
        };
        match pick {
            0 | 1 => {
                let (ta, a) = random_sql(rng, d, depth - 1);
                let (tb, b) = random_sql(rng, d, depth - 1);
                if pick == 0 {
                    (
                        format!("({ta}) AND ({tb})"),
                        Box::new(move |i| and(a(i), b(i))),
                    )
                } else {
                    (
                        format!("({ta}) OR ({tb})"),
                        Box::new(move |i| or(a(i), b(i))),
                    )
                }
            }
            2 => {
                let (ta, a) = random_sql(rng, d, depth - 1);
                (format!("NOT ({ta})"), Box::new(move |i| a(i).map(|v| !v)))
            }
            3 | 4 => {
                let (c, t) = comparison(rng, d, None, None).unwrap();
                (sql(&c), t)
            }
            5 => {
                // IN: equalities on one column; NOT IN half the time.
                let (c, a) = comparison(rng, d, None, Some(CmpOp::Eq)).unwrap();
                let (items, t): (Vec<String>, Truth<'a>) =
                    match comparison(rng, d, Some(&c.column), Some(CmpOp::Eq)) {
                        Some((c2, b)) => (
                            vec![c.value.to_string(), c2.value.to_string()],
                            Box::new(move |i| or(a(i), b(i))),
                        ),
                        None => (vec![c.value.to_string()], a),
                    };
                let not = rng.next_below(2) == 0;
                let text = format!(
                    "\"{}\" {}IN ({})",
                    c.column,
                    if not { "NOT " } else { "" },
                    items.join(", ")
                );
                (text, Box::new(move |i| t(i).map(|v| v != not)))
            }
            6 => {
                let (lo, a) = comparison(rng, d, None, Some(CmpOp::GtEq)).unwrap();
                let Some((hi, b)) = comparison(rng, d, Some(&lo.column), Some(CmpOp::LtEq)) else {
                    return (sql(&lo), a);
                };
                let not = rng.next_below(2) == 0;
                let text = format!(
                    "\"{}\" {}BETWEEN {} AND {}",
                    lo.column,
                    if not { "NOT " } else { "" },
                    lo.value,
                    hi.value
                );
                (text, Box::new(move |i| and(a(i), b(i)).map(|v| v != not)))
            }
            7 => {
                let column =
                    ["i64", "f64", "s", "ds", "b", "ts", "dec"][rng.next_below(7) as usize];
                let not = rng.next_below(2) == 0;
                let text = format!("\"{column}\" IS {}NULL", if not { "NOT " } else { "" });
                (text, Box::new(move |i| Some(null_at(d, column, i) != not)))
            }
            8 => {
                let column = ["s", "ds"][rng.next_below(2) as usize];
                let pattern =
                    ["a%", "%b", "_", "%", "a_", "%c%", "", "ab"][rng.next_below(8) as usize];
                let not = rng.next_below(2) == 0;
                let ilike = rng.next_below(3) == 0;
                let text = format!(
                    "\"{column}\" {}{} '{}'",
                    if not { "NOT " } else { "" },
                    if ilike { "ILIKE" } else { "LIKE" },
                    if ilike {
                        pattern.to_uppercase()
                    } else {
                        pattern.to_string()
                    }
                );
                let p: Vec<char> = pattern.chars().collect();
                (
                    text,
                    Box::new(move |i| {
                        let s = d.strs[i].as_ref()?;
                        let s: Vec<char> = s.chars().collect();
                        Some(like_matches(&s, &p) != not)
                    }),
                )
            }
            _ => {
                // Typed and evaluated by the spec's checker and evaluator.
                let k = rng.next_below(41) as i128 - 20;
                (
                    format!("i64 + i32 > {k}"),
                    Box::new(move |i| Some(2 * d.ints[i]? > k)),
                )
            }
        }
    }

    fn f(column: &str, op: CmpOp, value: Literal) -> Comparison {
        Comparison {
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
            ("x<=2.5", f("x", LtEq, Decimal("2.5".into()))),
            ("name = 'Ann'", f("name", Eq, Str("Ann".into()))),
            ("name == 'Ann'", f("name", Eq, Str("Ann".into()))),
            ("flag != true", f("flag", NotEq, Bool(true))),
            ("flag<>FALSE", f("flag", NotEq, Bool(false))),
            ("  \"a.b_c\"   >=   -7  ", f("a.b_c", GtEq, Int(-7))),
            ("v < 1e3", f("v", Lt, Decimal("1e3".into()))),
            ("v < -0.5", f("v", Lt, Decimal("-0.5".into()))),
            ("v < 2.50", f("v", Lt, Decimal("2.50".into()))),
            ("v < 1e400", f("v", Lt, Decimal("1e400".into()))),
            ("s = 'it''s'", f("s", Eq, Str("it's".into()))),
            ("s = ''", f("s", Eq, Str(String::new()))),
            ("s = 'a b = c'", f("s", Eq, Str("a b = c".into()))),
            ("\"my col\" = 3", f("my col", Eq, Int(3))),
            ("\"a \"\"q\"\"\" = 3", f("a \"q\"", Eq, Int(3))),
            ("\"in\" = 3", f("in", Eq, Int(3))),
            ("\"select\" < 'x'", f("select", Lt, Str("x".into()))),
            ("Name_2 = true", f("Name_2", Eq, Bool(true))),
            (
                "big > 99999999999999999999",
                f("big", Gt, Decimal("99999999999999999999".into())),
            ),
            ("x = 9223372036854775807", f("x", Eq, Int(i64::MAX))),
        ];
        for (text, want) in cases {
            let got = one(text);
            assert_eq!(got, want, "{text}");
            assert_eq!(
                text.parse::<Filter>().unwrap().node,
                Node::Compare(want.clone())
            );
            // Display gives text that parses back to the same filter.
            assert_eq!(one(&got.to_string()), want, "{got}");
            let filter = Filter::parse(text).unwrap();
            assert_eq!(
                Filter::parse(&filter.to_string()).unwrap().node,
                filter.node
            );
        }
    }

    /// The filter `text`, which is one comparison of a column with a
    /// literal.
    fn one(text: &str) -> Comparison {
        match Filter::parse(text)
            .unwrap_or_else(|e| panic!("{text}: {e}"))
            .node
        {
            Node::Compare(c) => c,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn rejects_bad_filters_with_the_expression_and_what_was_expected() {
        let cases = [
            ("", "at column 1: Expected: an expression, found: EOF"),
            ("x >", "at column 4: Expected: an expression, found: EOF"),
            ("> 5", "at column 1: Expected: an expression, found: >"),
            ("x = 'abc", "at column 5: Unterminated string literal"),
            ("x = 5 6", "at column 7: Expected: EOF, found: 6"),
            ("x ! 5", "at column 3"),
            ("x = 1.2.3", "at column 8: Expected: EOF, found: .3"),
        ];
        for (text, expected) in cases {
            let e = Filter::parse(text).unwrap_err();
            assert!(matches!(e, Error::InvalidConfig(_)), "{text}: {e:?}");
            let msg = e.to_string();
            assert!(msg.contains(&format!("\"{text}\"")), "{msg}");
            assert!(msg.contains(expected), "{text}: {msg}");
        }
        // SQL that parses and is wrong for the columns.
        let schema = Schema::new(vec![Field::new("x", DataType::Int64, true)]);
        for (text, expected) in [
            ("x", "at column 1: a condition is a boolean test"),
            ("x >> 5", "at column 1: operator `>>` is not supported"),
        ] {
            let e = Filter::parse(text).unwrap().check(&schema).unwrap_err();
            assert!(matches!(e, Error::InvalidConfig(_)), "{text}: {e:?}");
            let msg = e.to_string();
            assert!(msg.contains(&format!("\"{text}\"")), "{msg}");
            assert!(msg.contains(expected), "{text}: {msg}");
        }
        let e = Filter::parse("\"\" = 1")
            .unwrap()
            .check(&schema)
            .unwrap_err();
        assert!(
            matches!(&e, Error::UnknownColumn { name, .. } if name.is_empty()),
            "{e:?}"
        );
    }

    #[test]
    fn values_written_as_names_are_errors_that_say_how_to_write_them() {
        let schema = Schema::new(vec![
            Field::new("name", DataType::Utf8, true),
            Field::new("v", DataType::Float64, true),
            Field::new("x", DataType::Float64, true),
            Field::new("a.b_c", DataType::Int64, true),
        ]);
        for (text, expected) in [
            (
                "name == \"Ann\"",
                "at column 9: there is no column \"Ann\" (columns: name, v, x, a.b_c); \
                 a string is written in single quotes: 'Ann'",
            ),
            (
                "name IN ('Bo', \"it's\")",
                "at column 16: there is no column \"it's\" (columns: name, v, x, a.b_c); \
                 a string is written in single quotes: 'it''s'",
            ),
            (
                "v < inf",
                "at column 5: there is no column \"inf\" (columns: name, v, x, a.b_c); \
                 infinity is written as a number beyond the float range: 1e400 (or -1e400)",
            ),
            (
                "v > -Infinity",
                "at column 6: there is no column \"Infinity\"",
            ),
            (
                "x > nan",
                "at column 5: there is no column \"nan\" (columns: name, v, x, a.b_c); \
                 filters have no NaN literal",
            ),
            (
                "  a.b_c   >=   -7  ",
                "at column 3: `a.b_c` is not a name here; a name with a dot is written in \
                 double quotes: \"a.b_c\"",
            ),
        ] {
            let filter = Filter::parse(text).unwrap();
            let e = filter.check(&schema).unwrap_err();
            assert!(matches!(e, Error::InvalidConfig(_)), "{text}: {e:?}");
            let msg = e.to_string();
            assert!(
                msg.contains(&format!("\"{text}\" {expected}")),
                "{text}: {msg}"
            );
            assert!(!msg.contains('\n'), "{msg}");
        }
        // A name in double quotes that is a column is that column.
        let batch = RecordBatch::try_from_iter([
            (
                "name",
                Arc::new(StringArray::from(vec![Some("Ann"), Some("v"), None])) as ArrayRef,
            ),
            ("Ann", Arc::new(StringArray::from(vec!["Ann", "x", "y"]))),
        ])
        .unwrap();
        let columns = Filter::parse("name == \"Ann\"").unwrap();
        assert_eq!(
            columns.evaluate(&batch).unwrap(),
            BooleanArray::from(vec![true, false, false])
        );
        // Infinity as a number beyond the float range: the rows of the
        // comparison with infinity.
        let batch = RecordBatch::try_from_iter([(
            "v",
            Arc::new(arrow_array::Float64Array::from(vec![
                Some(1.0),
                Some(f64::INFINITY),
                Some(f64::NAN),
                Some(f64::NEG_INFINITY),
                None,
            ])) as ArrayRef,
        )])
        .unwrap();
        for (text, op, inf) in [
            ("v < 1e400", CmpOp::Lt, f64::INFINITY),
            ("v = 1e400", CmpOp::Eq, f64::INFINITY),
            ("v > -1e400", CmpOp::Gt, f64::NEG_INFINITY),
            ("v <= -1e400", CmpOp::LtEq, f64::NEG_INFINITY),
        ] {
            let want = f("v", op, Literal::Float(inf)).evaluate(&batch).unwrap();
            assert_eq!(
                Filter::parse(text).unwrap().evaluate(&batch).unwrap(),
                want,
                "{text}"
            );
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
            Field::new(
                "berlin",
                DataType::Timestamp(TimeUnit::Second, Some("Europe/Berlin".into())),
                true,
            ),
        ]);
        // A named zone: strings with an offset only.
        let e = Filter::parse("berlin < '2024-03-31 02:30:00'")
            .unwrap()
            .check(&schema)
            .unwrap_err();
        assert!(e.to_string().contains("no UTC offset"), "{e}");
        Filter::parse("berlin < '2024-03-31 02:30:00+01:00'")
            .unwrap()
            .check(&schema)
            .unwrap();
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
        let e = Filter::parse("t > 'soon'")
            .unwrap()
            .check(&schema)
            .unwrap_err();
        assert!(e.to_string().contains("HH:MM:SS"), "{e}");
        let e = Filter::parse("t > 1.5")
            .unwrap()
            .check(&schema)
            .unwrap_err();
        assert!(e.to_string().contains("quoted timestamp"), "{e}");
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
            "t > 0",
            "t >= '2024-01-01'",
            "t < '2024-01-01 10:00:00.123456789+05:00'",
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
        assert_eq!(
            Filter::parse("t > 0")
                .unwrap()
                .evaluate(&batch)
                .unwrap()
                .true_count(),
            1
        );
    }

    #[test]
    fn sql_filters_match_brute_force() {
        for seed in 0..12u64 {
            let d = random_data(seed, 300);
            let mut rng = RowRng::seeded(500 + seed);
            for _ in 0..60 {
                let depth = rng.next_below(4) as u32;
                let (text, truth) = random_sql(&mut rng, &d, depth);
                let filter = Filter::parse(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
                filter
                    .check(&d.batch.schema())
                    .unwrap_or_else(|e| panic!("{text}: {e}"));
                let mask = filter.evaluate(&d.batch).unwrap();
                assert_eq!(mask.null_count(), 0);
                let want: Vec<bool> = (0..d.batch.num_rows())
                    .map(|i| truth(i) == Some(true))
                    .collect();
                let got: Vec<bool> = mask.iter().map(|v| v.unwrap_or(true)).collect();
                assert_eq!(got, want, "seed {seed}: {text}");
            }
        }
    }

    #[test]
    fn sql_pruning_is_never_wrong() {
        let mut pruned = 0;
        for seed in 0..8u64 {
            let d = random_data(seed, 400);
            let (batch, md) = in_parquet(&d, 1 + (seed as usize % 5) * 17);
            let file_schema = batch.schema();
            let leaf = |name: &str| {
                let i = file_schema.index_of(name).ok()?;
                Some((i, file_schema.field(i).data_type().clone()))
            };
            let mut rng = RowRng::seeded(900 + seed);
            for _ in 0..80 {
                let depth = rng.next_below(3) as u32;
                let (text, truth) = random_sql(&mut rng, &d, depth);
                let filter = Filter::parse(&text).unwrap();
                if filter.columns(&file_schema).is_err() {
                    continue;
                }
                let mut start = 0usize;
                for rg in md.row_groups() {
                    let n = rg.num_rows() as usize;
                    if !filter.may_match_row_group(rg, &leaf) {
                        pruned += 1;
                        let hit = (start..start + n).find(|&i| truth(i) == Some(true));
                        assert!(hit.is_none(), "seed {seed}: {text} pruned row {hit:?}");
                    }
                    start += n;
                }
            }
        }
        assert!(pruned > 100, "pruned only {pruned} row groups");
    }

    #[test]
    fn date64_and_unsigned_columns_prune_exactly() {
        use arrow_array::{Date64Array, UInt64Array};
        const DAY: i64 = 86_400_000;
        let n = 600;
        let days: Vec<Option<i64>> = (0..n)
            .map(|i| (i % 7 != 3).then_some((i / 3 - 50) * DAY))
            .collect();
        let big: Vec<Option<u64>> = (0..n as u64)
            .map(|i| (i % 5 != 1).then_some(u64::MAX - 300 + i / 2))
            .collect();
        let batch = RecordBatch::try_from_iter([
            ("d", Arc::new(Date64Array::from(days.clone())) as ArrayRef),
            ("u", Arc::new(UInt64Array::from(big.clone()))),
        ])
        .unwrap();
        let md = parquet_footer(&batch, 50);
        let schema = batch.schema();
        let leaf = |name: &str| {
            let i = schema.index_of(name).ok()?;
            Some((i, schema.field(i).data_type().clone()))
        };
        let top = u64::MAX - 150;
        type Check<'a> = Box<dyn Fn(usize) -> bool + 'a>;
        let cases: Vec<(String, Check<'_>)> = vec![
            (
                "d < '1969-12-01'".into(),
                Box::new(|i| days[i].is_some_and(|v| v < -31 * DAY)),
            ),
            (
                format!("d >= {}", 10 * DAY),
                Box::new(|i| days[i].is_some_and(|v| v >= 10 * DAY)),
            ),
            (
                format!("u > {top}"),
                Box::new(|i| big[i].is_some_and(|v| v > top)),
            ),
            (
                format!("(u <= {top}) AND d IS NOT NULL"),
                Box::new(|i| big[i].is_some_and(|v| v <= top) && days[i].is_some()),
            ),
        ];
        for (text, check) in cases {
            let f = Filter::parse(&text).unwrap();
            let want: Vec<bool> = (0..n as usize).map(&check).collect();
            let got: Vec<bool> = f.evaluate(&batch).unwrap().values().iter().collect();
            assert_eq!(got, want, "{text}");
            let (mut start, mut pruned) = (0, 0);
            for rg in md.row_groups() {
                let rows = rg.num_rows() as usize;
                if !f.may_match_row_group(rg, &leaf) {
                    pruned += 1;
                    assert!(
                        !(start..start + rows).any(&check),
                        "{text}: row group at {start}"
                    );
                }
                start += rows;
            }
            assert!(pruned > 0, "{text}: nothing pruned");
        }
    }

    #[test]
    fn bad_filters_are_one_line_naming_the_column() {
        let schema = Schema::new(vec![
            arrow_schema::Field::new("a", DataType::Int64, true),
            arrow_schema::Field::new("s", DataType::Utf8, true),
        ]);
        for (text, at) in [
            ("a > 1 AND", "at column"),
            ("(a > 1", "at column"),
            ("a IN (1, 2", "at column"),
        ] {
            let e = Filter::parse(text).unwrap_err().to_string();
            assert!(
                e.contains(at) && e.contains(text) && !e.contains('\n'),
                "{e}"
            );
        }
        for (text, want) in [
            ("(a + s > 1)", "at column 2: type mismatch"),
            ("a > 1 AND (zz + 1 > 2)", "at column 12: unknown name `zz`"),
            (
                "a > 1 OR (a + 1)",
                "at column 11: a condition is a boolean test",
            ),
            ("a LIKE 'x%'", "LIKE needs a string column"),
        ] {
            let f = Filter::parse(text).unwrap();
            let e = f.check(&schema).unwrap_err().to_string();
            assert!(e.contains(want) && !e.contains('\n'), "{text}: {e}");
        }
        let e = Filter::parse("zz > 1 OR a IS NULL")
            .unwrap()
            .check(&schema)
            .unwrap_err();
        assert!(
            matches!(&e, Error::UnknownColumn { name, .. } if name == "zz"),
            "{e:?}"
        );
    }

    #[test]
    fn double_quotes_name_columns_and_two_columns_compare_without_parentheses() {
        let f = Filter::parse("name == \"Ann\"").unwrap();
        assert!(matches!(&f.node, Node::Test(_)), "{f:?}");
        let f = Filter::parse("x = abc").unwrap();
        assert!(matches!(&f.node, Node::Test(_)), "{f:?}");
        let f = Filter::parse("(x = abc)").unwrap();
        assert!(matches!(&f.node, Node::Test(_)), "{f:?}");
        assert_eq!(f.to_string(), "(x = abc)");
    }

    #[test]
    fn comparisons_of_two_columns_match_brute_force() {
        let mut rng = RowRng::seeded(41);
        let n = 200;
        let mut int = || -> Vec<Option<i64>> {
            (0..n)
                .map(|_| (rng.next_below(6) != 0).then(|| rng.next_below(11) as i64 - 5))
                .collect()
        };
        let (a, b) = (int(), int());
        let x: Vec<Option<f64>> = int().iter().map(|v| v.map(|v| v as f64 / 2.0)).collect();
        let batch = RecordBatch::try_from_iter([
            (
                "a",
                Arc::new(arrow_array::Int64Array::from(a.clone())) as ArrayRef,
            ),
            (
                "b",
                Arc::new(arrow_array::Int32Array::from_iter(
                    b.iter().map(|v| v.map(|v| v as i32)),
                )),
            ),
            ("x", Arc::new(arrow_array::Float64Array::from(x.clone()))),
        ])
        .unwrap();
        let value = |column: &str, i: usize| -> Option<f64> {
            match column {
                "a" => a[i].map(|v| v as f64),
                "b" => b[i].map(|v| v as f64),
                _ => x[i],
            }
        };
        let ops = [
            ("=", CmpOp::Eq),
            ("==", CmpOp::Eq),
            ("!=", CmpOp::NotEq),
            ("<>", CmpOp::NotEq),
            ("<", CmpOp::Lt),
            ("<=", CmpOp::LtEq),
            (">", CmpOp::Gt),
            (">=", CmpOp::GtEq),
        ];
        let pairs = [("a", "b"), ("b", "a"), ("a", "x"), ("x", "b"), ("a", "a")];
        for (l, r) in pairs {
            for (sym, op) in ops {
                let text = format!("{l} {sym} {r}");
                let filter = Filter::parse(&text).unwrap();
                assert_eq!(
                    filter.columns(&batch.schema()).unwrap().len(),
                    if l == r { 1 } else { 2 }
                );
                let got = filter.evaluate(&batch).unwrap();
                let want: Vec<bool> = (0..n)
                    .map(|i| match (value(l, i), value(r, i)) {
                        (Some(u), Some(v)) => op.holds(u.partial_cmp(&v).unwrap()),
                        _ => false,
                    })
                    .collect();
                assert_eq!(got.values().iter().collect::<Vec<_>>(), want, "{text}");
                // With another clause, still without parentheses.
                let text = format!("{l} {sym} {r} AND a IS NOT NULL OR b < a");
                let got = Filter::parse(&text).unwrap().evaluate(&batch).unwrap();
                let want: Vec<bool> = (0..n)
                    .map(|i| {
                        let cmp = match (value(l, i), value(r, i)) {
                            (Some(u), Some(v)) => Some(op.holds(u.partial_cmp(&v).unwrap())),
                            _ => None,
                        };
                        let lt = match (b[i], a[i]) {
                            (Some(u), Some(v)) => Some(u < v),
                            _ => None,
                        };
                        or(and(cmp, Some(a[i].is_some())), lt) == Some(true)
                    })
                    .collect();
                assert_eq!(got.values().iter().collect::<Vec<_>>(), want, "{text}");
            }
        }
    }

    /// The answer of a filter's clauses for one row group, judged row
    /// group by row group (the reference for the pruning of all at once).
    fn reference_may_match(
        node: &Node,
        rg: &RowGroupMetaData,
        leaf: &dyn Fn(&str) -> Option<(usize, DataType)>,
        negated: bool,
    ) -> bool {
        let m = |n: &Node, negated| reference_may_match(n, rg, leaf, negated);
        match (node, negated) {
            (Node::And(a, b), false) | (Node::Or(a, b), true) => m(a, negated) && m(b, negated),
            (Node::Or(a, b), false) | (Node::And(a, b), true) => m(a, negated) || m(b, negated),
            (Node::Not(a), _) => m(a, !negated),
            (Node::Compare(c), _) => {
                let Some((at, t)) = leaf(&c.column) else {
                    return true;
                };
                let op = if negated { negate(c.op) } else { c.op };
                let c = Comparison { op, ..c.clone() };
                reference_may_match_row_group(&c, rg, at, &t)
            }
            _ => true,
        }
    }

    /// [`random_data`] of `seed` in row groups of `group_rows`, some
    /// columns without statistics or with truncated ones as `seed` picks.
    fn many_groups(
        seed: u64,
        rows: usize,
        group_rows: usize,
    ) -> (Data, RecordBatch, parquet::file::metadata::ParquetMetaData) {
        use parquet::file::properties::{EnabledStatistics, WriterProperties};
        let d = random_data(seed, rows);
        let (batch, _) = in_parquet(&d, group_rows);
        let mut props = WriterProperties::builder().set_max_row_group_row_count(Some(group_rows));
        if seed % 2 == 1 {
            props = props
                .set_column_statistics_enabled("f64".into(), EnabledStatistics::None)
                .set_column_statistics_enabled("dec".into(), EnabledStatistics::None);
        }
        if seed % 3 == 1 {
            props = props.set_statistics_truncate_length(Some(1));
        }
        let mut buf = Vec::new();
        let mut w =
            parquet::arrow::ArrowWriter::try_new(&mut buf, batch.schema(), Some(props.build()))
                .unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        let md = parquet::file::metadata::ParquetMetaDataReader::new()
            .parse_and_finish(&bytes::Bytes::from(buf))
            .unwrap();
        (d, batch, md)
    }

    #[test]
    fn pruning_all_row_groups_at_once_equals_one_at_a_time() {
        let (mut pruned, mut kept) = (0, 0);
        for seed in 0..6u64 {
            let (d, batch, md) = many_groups(seed, 1500, 3 + seed as usize * 2);
            assert!(
                md.num_row_groups() > 80,
                "{} row groups",
                md.num_row_groups()
            );
            let schema = batch.schema();
            let leaf = |name: &str| {
                let i = schema.index_of(name).ok()?;
                Some((i, schema.field(i).data_type().clone()))
            };
            let all: Vec<&RowGroupMetaData> = md.row_groups().iter().collect();
            // Every third row group, from the end: a subset in any order.
            let some: Vec<&RowGroupMetaData> = all.iter().rev().step_by(3).copied().collect();
            let mut rng = RowRng::seeded(4000 + seed);
            for _ in 0..80 {
                let depth = rng.next_below(4) as u32;
                let (text, _) = random_sql(&mut rng, &d, depth);
                let filter = Filter::parse(&text).unwrap();
                if filter.columns(&schema).is_err() {
                    continue;
                }
                for groups in [&all, &some] {
                    let want: Vec<bool> = groups
                        .iter()
                        .map(|rg| {
                            rg.num_rows() > 0 && reference_may_match(&filter.node, rg, &leaf, false)
                        })
                        .collect();
                    let got = filter.may_match_row_groups(groups, &leaf);
                    assert_eq!(got, want, "seed {seed}: {text}");
                    pruned += want.iter().filter(|w| !**w).count();
                    kept += want.iter().filter(|w| **w).count();
                }
            }
            // Single comparisons, on every column and operator.
            for _ in 0..150 {
                let (c, _) = random_filter(&mut rng, &d);
                let Some((at, t)) = leaf(&c.column) else {
                    continue;
                };
                let want: Vec<bool> = all
                    .iter()
                    .map(|rg| reference_may_match_row_group(&c, rg, at, &t))
                    .collect();
                assert_eq!(
                    c.may_match_row_groups(&all, at, &t),
                    want,
                    "seed {seed}: {c}"
                );
                let one: Vec<bool> = all
                    .iter()
                    .map(|rg| c.may_match_row_group(rg, at, &t))
                    .collect();
                assert_eq!(one, want, "seed {seed}: {c}");
            }
        }
        assert!(pruned > 1000 && kept > 1000, "pruned {pruned}, kept {kept}");
    }
}
/// Random SQL from a small grammar over [`random_data`]'s columns: a
/// filter that parses and checks evaluates without a panic or a null.
#[cfg(test)]
mod random_text {
    use super::comparison::tests::random_data;
    use super::*;
    use strata_gen::rng::RowRng;

    const COLS: [&str; 15] = [
        "i64", "i32", "u8", "u64", "f64", "s", "ds", "di", "b", "dec", "decw", "ts", "tss", "tsz",
        "day",
    ];
    const LITS: [&str; 14] = [
        "1",
        "-3",
        "2.5",
        "1e400",
        "-0.0",
        "'a%'",
        "'2024-01-01'",
        "'x'",
        "TRUE",
        "NULL",
        "99999999999999999999",
        "DATE '2024-01-01'",
        "0",
        "'2024-01-01 10:00:00+02:00'",
    ];

    fn pick<'a>(rng: &mut RowRng, xs: &[&'a str]) -> &'a str {
        xs[rng.next_below(xs.len() as u64) as usize]
    }

    fn arith(rng: &mut RowRng, depth: u32) -> String {
        match if depth == 0 { 0 } else { rng.next_below(4) } {
            0 => pick(rng, &COLS).to_string(),
            1 => pick(rng, &LITS).to_string(),
            2 => {
                let op = pick(rng, &["+", "-", "*", "/", "%", "||", "//"]);
                format!("{} {op} {}", arith(rng, depth - 1), arith(rng, depth - 1))
            }
            _ => format!("({})", arith(rng, depth - 1)),
        }
    }

    fn expr(rng: &mut RowRng, depth: u32) -> String {
        let col = pick(rng, &COLS);
        match if depth == 0 {
            rng.next_below(5)
        } else {
            rng.next_below(9)
        } {
            0 => format!(
                "{} {} {}",
                arith(rng, 1),
                pick(rng, &["=", "<>", "<", ">="]),
                arith(rng, 1)
            ),
            1 => format!("{col} IS {}NULL", pick(rng, &["", "NOT "])),
            2 => format!(
                "{col} {}IN ({}, {})",
                pick(rng, &["", "NOT "]),
                pick(rng, &LITS),
                pick(rng, &LITS)
            ),
            3 => format!(
                "{col} BETWEEN {} AND {}",
                pick(rng, &LITS),
                pick(rng, &LITS)
            ),
            4 => format!(
                "{col} {} {}",
                pick(rng, &["LIKE", "NOT LIKE", "ILIKE"]),
                pick(rng, &LITS)
            ),
            5 => format!("({}) AND ({})", expr(rng, depth - 1), expr(rng, depth - 1)),
            6 => format!("{} OR {}", expr(rng, depth - 1), expr(rng, depth - 1)),
            7 => format!("NOT {}", expr(rng, depth - 1)),
            _ => format!("{col} {} {}", pick(rng, &["=", "<", ">"]), pick(rng, &LITS)),
        }
    }

    #[test]
    fn random_sql_never_panics() {
        let d = random_data(1, 50);
        let schema = d.batch.schema();
        let mut rng = RowRng::seeded(3);
        let (mut checked, mut ok) = (0, 0);
        for _ in 0..20_000 {
            let depth = rng.next_below(3) as u32;
            let text = expr(&mut rng, depth);
            let Ok(f) = Filter::parse(&text) else {
                continue;
            };
            if f.check(&schema).is_err() {
                continue;
            }
            checked += 1;
            if let Ok(m) = f.evaluate(&d.batch) {
                assert_eq!(arrow_array::Array::null_count(&m), 0);
                ok += 1;
            }
        }
        eprintln!("{checked} checked, {ok} evaluated");
    }
}
