//! Predicates: a boolean SQL expression over a table's columns (a scan's
//! row filter), in the same dialect and with the same type rules as the
//! spec's `expr` fields.
//!
//! [`Predicate::parse`] reads the text and splits it into a tree of
//! [`Clause`]s: `AND`, `OR` and `NOT` over comparisons of a column with
//! a literal ([`Comparison`]; `IN` lists and `BETWEEN` of literals become
//! these too), `IS [NOT] NULL` and `[NOT] LIKE` / `ILIKE` of a column, and
//! any other boolean expression ([`Test`]). A reader compares the
//! [`Comparison`]s itself, exactly for its column's type, and can skip
//! data by them; a [`Test`] is typed by the spec's checker against the
//! columns ([`Test::bind`]) and evaluated by the spec's evaluator
//! ([`BoundTest::evaluate`]).

use std::{cmp::Ordering, fmt, sync::Arc};

use arrow_array::{ArrayRef, BooleanArray, RecordBatch, cast::AsArray};
use arrow_schema::{DataType, Schema};
use sqlparser::ast::{self, BinaryOperator as B, Spanned, UnaryOperator as U};

use super::check::{ExprError, check_parsed, is_test, not_a_test, parse_sql};
use super::eval::evaluate;
use super::value::Inputs;
use crate::Error;
use crate::model::expression::TNode;
use crate::rng::StreamKey;

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
    pub fn holds(self, ord: Ordering) -> bool {
        match self {
            CmpOp::Eq => ord == Ordering::Equal,
            CmpOp::NotEq => ord != Ordering::Equal,
            CmpOp::Lt => ord == Ordering::Less,
            CmpOp::LtEq => ord != Ordering::Greater,
            CmpOp::Gt => ord == Ordering::Greater,
            CmpOp::GtEq => ord != Ordering::Less,
        }
    }

    /// The operator with its operands swapped: `a < b` is `b > a`.
    pub fn flipped(self) -> CmpOp {
        match self {
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::LtEq => CmpOp::GtEq,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::GtEq => CmpOp::LtEq,
            op => op,
        }
    }
}

impl fmt::Display for CmpOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

/// A literal a column is compared with, as written.
#[derive(Debug, Clone, PartialEq)]
pub enum SqlLiteral {
    /// A number as written, sign included: `42`, `-2.50`, `1e3`.
    Number(String),
    /// A string in single quotes.
    Str(String),
    /// `TRUE` or `FALSE`.
    Bool(bool),
}

/// `column OP literal`.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The column compared.
    pub column: String,
    /// The comparison.
    pub op: CmpOp,
    /// The constant compared with.
    pub literal: SqlLiteral,
}

/// A part of a predicate; `C` is its comparisons' form (as parsed,
/// [`Comparison`], unless a reader gives them its own with
/// [`Clause::try_map`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Clause<C = Comparison> {
    /// Both hold.
    And(Box<Clause<C>>, Box<Clause<C>>),
    /// Either holds.
    Or(Box<Clause<C>>, Box<Clause<C>>),
    /// The clause does not hold (null stays null).
    Not(Box<Clause<C>>),
    /// A column compared with a literal.
    Compare(C),
    /// `column IS NULL` (`negated`: `IS NOT NULL`).
    IsNull {
        /// The column tested.
        column: String,
        /// `IS NOT NULL`.
        negated: bool,
    },
    /// `column [NOT] LIKE pattern` or `ILIKE` (`%` any run, `_` one
    /// character).
    Like {
        /// The column matched (a string column).
        column: String,
        /// The pattern.
        pattern: String,
        /// `NOT LIKE`.
        negated: bool,
        /// `ILIKE`: case-insensitive.
        case_insensitive: bool,
    },
    /// Any other boolean expression.
    Test(Test),
}

impl<C> Clause<C> {
    /// The same clauses with every comparison turned into `f`'s form; the
    /// first error of `f` stops it.
    ///
    /// # Errors
    ///
    /// `f`'s.
    pub fn try_map<D, E>(self, f: &mut impl FnMut(C) -> Result<D, E>) -> Result<Clause<D>, E> {
        Ok(match self {
            Clause::And(a, b) => Clause::And(Box::new(a.try_map(f)?), Box::new(b.try_map(f)?)),
            Clause::Or(a, b) => Clause::Or(Box::new(a.try_map(f)?), Box::new(b.try_map(f)?)),
            Clause::Not(a) => Clause::Not(Box::new(a.try_map(f)?)),
            Clause::Compare(c) => Clause::Compare(f(c)?),
            Clause::IsNull { column, negated } => Clause::IsNull { column, negated },
            Clause::Like {
                column,
                pattern,
                negated,
                case_insensitive,
            } => Clause::Like {
                column,
                pattern,
                negated,
                case_insensitive,
            },
            Clause::Test(t) => Clause::Test(t),
        })
    }
}

/// A boolean expression typed and evaluated by the spec's checker and
/// evaluator.
#[derive(Debug, Clone, PartialEq)]
pub struct Test {
    ast: Box<ast::Expr>,
}

/// A parsed predicate.
#[derive(Debug, Clone, PartialEq)]
pub struct Predicate {
    /// The text as written.
    pub source: String,
    /// Its clauses.
    pub clause: Clause,
}

/// A mistake in a predicate: where (1-based column in its text) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PredicateError {
    /// The column in the text.
    pub column: u64,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for PredicateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at column {}: {}", self.column, self.message)
    }
}

impl std::error::Error for PredicateError {}

impl From<ExprError> for PredicateError {
    fn from(e: ExprError) -> Self {
        PredicateError {
            column: e.column,
            message: e.message,
        }
    }
}

impl Predicate {
    /// Parses `source`, one SQL expression in the dialect of the spec's
    /// `expr` fields.
    ///
    /// # Errors
    ///
    /// The parser's error, at the column where it stopped.
    pub fn parse(source: &str) -> Result<Predicate, PredicateError> {
        let ast = parse_sql(source).map_err(|mut e| {
            // The parser names no column when the text ended too soon.
            if e.column == 1 && e.message.ends_with("found: EOF") {
                e.column = source.chars().count() as u64 + 1;
            }
            e
        })?;
        Ok(Predicate {
            source: source.to_string(),
            clause: clause(&ast),
        })
    }
}

/// The clause of `e`.
fn clause(e: &ast::Expr) -> Clause {
    use ast::Expr as E;
    let test = || {
        Clause::Test(Test {
            ast: Box::new(e.clone()),
        })
    };
    match e {
        E::Nested(inner) => clause(inner),
        E::BinaryOp { left, op, right } => {
            let both = |l, r| (Box::new(clause(l)), Box::new(clause(r)));
            match op {
                B::And => {
                    let (a, b) = both(left, right);
                    Clause::And(a, b)
                }
                B::Or => {
                    let (a, b) = both(left, right);
                    Clause::Or(a, b)
                }
                _ => {
                    let Some(op) = cmp_op(op) else {
                        return test();
                    };
                    match (column(left), literal(right), column(right), literal(left)) {
                        (Some(c), Some(l), ..) => compare(c, op, l),
                        (_, _, Some(c), Some(l)) => compare(c, op.flipped(), l),
                        _ => test(),
                    }
                }
            }
        }
        E::UnaryOp {
            op: U::Not,
            expr: inner,
        } => Clause::Not(Box::new(clause(inner))),
        E::InList {
            expr,
            list,
            negated,
        } => {
            let (Some(c), Some(lits)) = (
                column(expr),
                list.iter().map(literal).collect::<Option<Vec<_>>>(),
            ) else {
                return test();
            };
            let Some(any) = lits
                .into_iter()
                .map(|l| compare(c.clone(), CmpOp::Eq, l))
                .reduce(|a, b| Clause::Or(Box::new(a), Box::new(b)))
            else {
                return test();
            };
            negate(any, *negated)
        }
        E::Between {
            expr,
            negated,
            low,
            high,
        } => {
            let (Some(c), Some(lo), Some(hi)) = (column(expr), literal(low), literal(high)) else {
                return test();
            };
            let both = Clause::And(
                Box::new(compare(c.clone(), CmpOp::GtEq, lo)),
                Box::new(compare(c, CmpOp::LtEq, hi)),
            );
            negate(both, *negated)
        }
        E::IsNull(x) | E::IsNotNull(x) => match column(x) {
            Some(column) => Clause::IsNull {
                column,
                negated: matches!(e, E::IsNotNull(_)),
            },
            None => test(),
        },
        E::Like {
            negated,
            any: false,
            expr,
            pattern,
            escape_char: None,
        }
        | E::ILike {
            negated,
            any: false,
            expr,
            pattern,
            escape_char: None,
        } => match (column(expr), literal(pattern)) {
            (Some(column), Some(SqlLiteral::Str(pattern))) => Clause::Like {
                column,
                pattern,
                negated: *negated,
                case_insensitive: matches!(e, E::ILike { .. }),
            },
            _ => test(),
        },
        _ => test(),
    }
}

fn negate(c: Clause, negated: bool) -> Clause {
    if negated { Clause::Not(Box::new(c)) } else { c }
}

fn compare(column: String, op: CmpOp, literal: SqlLiteral) -> Clause {
    Clause::Compare(Comparison {
        column,
        op,
        literal,
    })
}

fn cmp_op(op: &B) -> Option<CmpOp> {
    Some(match op {
        B::Eq => CmpOp::Eq,
        B::NotEq => CmpOp::NotEq,
        B::Lt => CmpOp::Lt,
        B::LtEq => CmpOp::LtEq,
        B::Gt => CmpOp::Gt,
        B::GtEq => CmpOp::GtEq,
        _ => return None,
    })
}

/// The column `e` names, if it is a plain name.
fn column(e: &ast::Expr) -> Option<String> {
    match e {
        ast::Expr::Identifier(id) => Some(id.value.clone()),
        ast::Expr::Nested(inner) => column(inner),
        _ => None,
    }
}

/// The literal `e` is, if it is a number (with an optional sign), a
/// single-quoted string or a boolean.
fn literal(e: &ast::Expr) -> Option<SqlLiteral> {
    use ast::Expr as E;
    match e {
        E::Nested(inner) => literal(inner),
        E::Value(v) => match &v.value {
            ast::Value::Number(n, false) => Some(SqlLiteral::Number(n.clone())),
            ast::Value::SingleQuotedString(s) => Some(SqlLiteral::Str(s.clone())),
            ast::Value::Boolean(b) => Some(SqlLiteral::Bool(*b)),
            _ => None,
        },
        E::UnaryOp {
            op: op @ (U::Minus | U::Plus),
            expr,
        } => match &**expr {
            E::Value(v) => match &v.value {
                ast::Value::Number(n, false) if !n.starts_with(['-', '+']) => {
                    let sign = if *op == U::Minus { "-" } else { "" };
                    Some(SqlLiteral::Number(format!("{sign}{n}")))
                }
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}

/// A [`Test`] typed against a table's columns.
#[derive(Debug, Clone)]
pub struct BoundTest {
    tree: TNode,
    /// The columns it reads, each once, in first-use order.
    columns: Vec<String>,
}

impl Test {
    /// Where the test starts in the predicate's text (1-based column).
    pub fn column(&self) -> u64 {
        self.ast.span().start.column.max(1)
    }

    /// Types the test against `schema`'s top-level columns with the
    /// spec's checker.
    ///
    /// # Errors
    ///
    /// An unknown name, a type mismatch, a function or operator the
    /// dialect does not have, or an expression that is not a boolean
    /// test, at its column.
    pub fn bind(&self, schema: &Schema) -> Result<BoundTest, PredicateError> {
        let columns: Vec<(&str, &DataType)> = schema
            .fields()
            .iter()
            .map(|f| (f.name().as_str(), f.data_type()))
            .collect();
        let (tree, inputs) = check_parsed(&self.ast, &columns)?;
        if !is_test(&tree) {
            return Err(PredicateError {
                column: self.column(),
                message: not_a_test(&tree),
            });
        }
        // Number the columns in the order they are read, so a batch is
        // looked up by name and need not have the schema's columns.
        let at: Vec<usize> = columns
            .iter()
            .map(|(n, _)| inputs.iter().position(|i| i == n).unwrap_or(usize::MAX))
            .collect();
        Ok(BoundTest {
            tree: tree.with_columns(&|i| at[i]),
            columns: inputs,
        })
    }
}

impl BoundTest {
    /// The columns the test reads.
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// The test for each row of `batch`, null where SQL's answer is null
    /// (a comparison with a null). `batch` has the columns the test was
    /// bound with, found by name.
    ///
    /// # Errors
    ///
    /// A column missing from `batch`, or an evaluation error (an
    /// arithmetic overflow).
    pub fn evaluate(&self, batch: &RecordBatch) -> Result<BooleanArray, Error> {
        let schema = batch.schema();
        let mut slots: Vec<Option<ArrayRef>> = Vec::new();
        for name in &self.columns {
            let array = batch.column_by_name(name).ok_or_else(|| {
                Error::InvalidDistribution(format!(
                    "predicate: column '{name}' is not in the batch (columns: {})",
                    schema
                        .fields()
                        .iter()
                        .map(|f| f.name().as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?;
            slots.push(Some(Arc::clone(array)));
        }
        let ids: Vec<u64> = (0..batch.num_rows() as u64).collect();
        let inputs = Inputs {
            columns: &slots,
            ids: &ids,
            key: StreamKey::new(0, 0),
        };
        let out = evaluate(&self.tree, &inputs, &DataType::Boolean)?;
        out.as_boolean_opt()
            .cloned()
            .ok_or_else(|| Error::InvalidDistribution("predicate: a test is not a boolean".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int64Array, StringArray};
    use arrow_schema::Field;

    fn cmp(column: &str, op: CmpOp, n: &str) -> Clause {
        compare(column.into(), op, SqlLiteral::Number(n.into()))
    }

    #[test]
    fn splits_into_clauses() {
        use CmpOp::*;
        let c = |text: &str| Predicate::parse(text).unwrap().clause;
        assert_eq!(c("(a > -2.5)"), cmp("a", Gt, "-2.5"));
        assert_eq!(c("3 <= a"), cmp("a", GtEq, "3"));
        assert_eq!(
            c("a BETWEEN 1 AND 2"),
            Clause::And(Box::new(cmp("a", GtEq, "1")), Box::new(cmp("a", LtEq, "2")))
        );
        assert_eq!(
            c("a NOT IN (1, 2)"),
            Clause::Not(Box::new(Clause::Or(
                Box::new(cmp("a", Eq, "1")),
                Box::new(cmp("a", Eq, "2"))
            )))
        );
        assert_eq!(
            c("s IS NOT NULL OR NOT s ILIKE 'a%'"),
            Clause::Or(
                Box::new(Clause::IsNull {
                    column: "s".into(),
                    negated: true
                }),
                Box::new(Clause::Not(Box::new(Clause::Like {
                    column: "s".into(),
                    pattern: "a%".into(),
                    negated: false,
                    case_insensitive: true
                })))
            )
        );
        assert!(matches!(c("a + 1 > 2"), Clause::Test(_)));
        assert!(matches!(c("a = b"), Clause::Test(_)));
    }

    #[test]
    fn errors_name_the_column() {
        let e = Predicate::parse("a > 1 AND").unwrap_err();
        assert_eq!(e.column, 10, "{e}");
        let e = Predicate::parse("a > (1").unwrap_err();
        assert!(e.column > 1, "{e}");
        let schema = Schema::new(vec![
            Field::new("a", DataType::Int64, true),
            Field::new("s", DataType::Utf8, true),
        ]);
        let test = |text: &str| match Predicate::parse(text).unwrap().clause {
            Clause::Test(t) => t,
            other => panic!("{other:?}"),
        };
        let e = test("a + s > 1").bind(&schema).unwrap_err();
        assert_eq!(e.column, 1, "{e}");
        assert!(e.message.contains("type mismatch"), "{e}");
        let e = test("a + 1").bind(&schema).unwrap_err();
        assert!(e.message.contains("boolean test"), "{e}");
        let e = test("a + x.y > 1").bind(&schema).unwrap_err();
        assert_eq!(e.column, 5, "{e}");
        assert!(e.message.contains("\"x.y\""), "{e}");
    }

    #[test]
    fn bound_tests_read_columns_by_name() {
        let schema = Schema::new(vec![
            Field::new("s", DataType::Utf8, true),
            Field::new("a", DataType::Int64, true),
        ]);
        let Clause::Test(t) = Predicate::parse("coalesce(a % 2 = 0, s || 'x' = 'bx')")
            .unwrap()
            .clause
        else {
            panic!()
        };
        let bound = t.bind(&schema).unwrap();
        assert_eq!(bound.columns(), ["a", "s"]);
        // Another column order, and a column the test does not read.
        let batch = RecordBatch::try_from_iter([
            (
                "z",
                Arc::new(Int64Array::from(vec![0, 0, 0, 0])) as ArrayRef,
            ),
            (
                "a",
                Arc::new(Int64Array::from(vec![Some(1), Some(2), None, Some(3)])),
            ),
            (
                "s",
                Arc::new(StringArray::from(vec![Some("b"), None, Some("b"), None])),
            ),
        ])
        .unwrap();
        let got: Vec<Option<bool>> = bound.evaluate(&batch).unwrap().iter().collect();
        assert_eq!(got, [Some(false), Some(true), Some(true), Some(false)]);
    }
}
