//! Expression fields: `expr = "SQL"`, a value computed from the row's
//! sibling fields, checked when the spec is parsed and evaluated a batch
//! at a time with Arrow's compute kernels (no per-row interpreter).
//!
//! The SQL is DuckDB's dialect (parsed by `sqlparser`), and its types
//! follow DuckDB's rules where they matter to the values: integers are
//! 64-bit and overflow is an error; `/` divides as floating point, `//`
//! as integers; decimal `+`, `-` and `*` are exact, with DuckDB's result
//! scale (the larger scale for `+`/`-`, their sum for `*`) and a spec
//! error when the result could need more than 38 digits; a date plus or
//! minus an integer (or an `INTERVAL n DAY`) is a date, a date minus a
//! date is days; timestamps (microseconds, the field's unit and zone
//! restored when stored) take intervals of weeks down to seconds.
//! Division or remainder by zero is **null**, as
//! documented in the README. The value is then converted to the field's
//! type: integers only from integers, decimals rounded half away from
//! zero to the field's scale (an error if they do not fit its precision),
//! strings to any string or dictionary type.
//!
//! What an expression may use: sibling names, qualified names of other
//! rows in a dataset (`parent.x`, the parent row's; `ps.x`, the row a
//! sibling reference with `draw = "ps"` drew; each read as a reference,
//! its column after the siblings'), literals (numbers, strings,
//! `DATE '...'`, `TRUE`, `NULL`), `+ - * / // %`, comparisons, `AND`,
//! `OR`, `NOT`, `IS [NOT] NULL`, `BETWEEN`, `IN (...)`, `CASE`,
//! `COALESCE`, `LEAST`, `GREATEST`, `||` and `concat`, `lpad`, `round`,
//! `CAST`, and `uniform(min, max)`: a random integer drawn from the
//! field's own stream for each row, so the data stays a pure function of
//! (spec, seed, row).

use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, BooleanArray, Date32Array, Datum, Decimal128Array, Float64Array, Int64Array,
    Scalar, StringArray, TimestampMicrosecondArray, cast::AsArray, new_null_array,
};
use arrow_schema::DataType;
use sqlparser::{
    ast::{self, BinaryOperator as B, Spanned, UnaryOperator as U},
    dialect::DuckDbDialect,
    parser::Parser,
};

use crate::Error;
use crate::model::expression::{Arith, Cmp, ETy, Lit, NodeK, TNode};
use crate::rng::StreamKey;

/// The most digits of a decimal expression (Arrow's `Decimal128`).
const MAX_PRECISION: u8 = 38;

/// An error in an expression: the column (1-based, in the expression's
/// text) and what is wrong.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ExprError {
    pub column: u64,
    pub message: String,
}

type R<T> = Result<T, ExprError>;

fn fail<T>(at: &impl Spanned, message: impl Into<String>) -> R<T> {
    fail_at(at.span().start.column, message)
}

fn fail_at<T>(column: u64, message: impl Into<String>) -> R<T> {
    Err(ExprError {
        column: column.max(1),
        message: message.into(),
    })
}

/// What a checked expression reads: its tree, the sibling names it reads
/// and the qualified names (`parent.x`), whose columns follow the
/// siblings' in the tree (the `k`-th is column `siblings.len() + k`).
pub(crate) type Checked = (TNode, Vec<String>, Vec<(String, String)>);

/// Parses `source` and checks it against `siblings` (name and Arrow type
/// of each): names, types, decimal precision. `qualified(q, x)` gives the
/// type of `q.x`, or why it cannot be read.
pub(crate) fn check(
    source: &str,
    siblings: &[(&str, &DataType)],
    qualified: &dyn Fn(&str, &str) -> Result<DataType, String>,
) -> Result<Checked, ExprError> {
    let ast = Parser::new(&DuckDbDialect {})
        .try_with_sql(source)
        .and_then(|mut p| {
            let e = p.parse_expr()?;
            p.expect_token(&sqlparser::tokenizer::Token::EOF)?;
            Ok(e)
        })
        .map_err(|e| {
            let text = e.to_string();
            let column = text
                .rsplit("Column: ")
                .next()
                .and_then(|c| c.trim().parse().ok())
                .unwrap_or(1);
            ExprError {
                column,
                message: text
                    .trim_start_matches("sql parser error: ")
                    .split(" at Line:")
                    .next()
                    .unwrap_or(&text)
                    .to_string(),
            }
        })?;
    let mut c = Checker {
        siblings,
        qualified,
        inputs: Vec::new(),
        reads: Vec::new(),
        salts: 0,
        depth: 0,
    };
    let tree = c.node(&ast)?;
    Ok((tree, c.inputs, c.reads))
}

struct Checker<'a> {
    siblings: &'a [(&'a str, &'a DataType)],
    qualified: &'a dyn Fn(&str, &str) -> Result<DataType, String>,
    inputs: Vec<String>,
    /// The qualified names read: (qualifier, field), in first-use order.
    reads: Vec<(String, String)>,
    salts: u64,
    /// How many nodes deep the node being checked is.
    depth: usize,
}

/// The deepest an expression may nest (checking and evaluation recurse
/// once per level, so this bounds the stack they use).
const MAX_DEPTH: usize = 64;

fn node(ty: ETy, kind: NodeK) -> TNode {
    TNode { ty, kind }
}

fn cast(n: TNode, to: ETy) -> TNode {
    if n.ty == to {
        n
    } else {
        node(to, NodeK::Cast(Box::new(n)))
    }
}

/// The type both numbers are converted to before an operation between
/// them (decimals keep their own precision and scale).
fn numeric_common(a: ETy, b: ETy) -> Option<ETy> {
    Some(match (a, b) {
        (ETy::Int, ETy::Int) => ETy::Int,
        (ETy::Float, x) | (x, ETy::Float) if x.numeric() || x == ETy::Null => ETy::Float,
        (ETy::Decimal(..), ETy::Decimal(..)) => a,
        // An integer beside a decimal widens it to hold any integer (as
        // DuckDB's `x < 2.5` with `x` a BIGINT): 19 integer digits.
        (ETy::Decimal(p, s), ETy::Int) | (ETy::Int, ETy::Decimal(p, s)) => {
            let int = (p as i16 - s as i16).max(19);
            ETy::Decimal((int + s as i16).min(MAX_PRECISION as i16) as u8, s)
        }
        (ETy::Null, x) | (x, ETy::Null) if x.numeric() => x,
        _ => return None,
    })
}

/// The type all of `tys` can be converted to (for comparisons, `CASE`
/// results, `COALESCE`, ...).
fn unify(tys: &[ETy]) -> Option<ETy> {
    let mut out = ETy::Null;
    for &t in tys {
        out = match (out, t) {
            (ETy::Null, t) | (t, ETy::Null) => t,
            (a, b) if a == b => a,
            (ETy::Date, ETy::Timestamp) | (ETy::Timestamp, ETy::Date) => ETy::Timestamp,
            (ETy::Decimal(p1, s1), ETy::Decimal(p2, s2)) => {
                let s = s1.max(s2);
                let int = (p1 as i16 - s1 as i16).max(p2 as i16 - s2 as i16);
                ETy::Decimal(((int + s as i16) as u8).min(MAX_PRECISION), s)
            }
            (a, b) if a.numeric() && b.numeric() => numeric_common(a, b)?,
            _ => return None,
        };
    }
    Some(out)
}

/// A decimal type for an integer operand.
const INT_AS_DECIMAL: ETy = ETy::Decimal(19, 0);

impl Checker<'_> {
    fn node(&mut self, e: &ast::Expr) -> R<TNode> {
        if self.depth == MAX_DEPTH {
            // Column 1: finding this node's own column would walk the
            // whole subtree below it.
            return fail_at(
                1,
                format!(
                    "the expression nests more than {MAX_DEPTH} levels deep; split it into fields that read each other"
                ),
            );
        }
        self.depth += 1;
        let r = self.node_at(e);
        self.depth -= 1;
        r
    }

    fn node_at(&mut self, e: &ast::Expr) -> R<TNode> {
        use ast::Expr as E;
        match e {
            E::Nested(inner) => self.node(inner),
            E::Identifier(id) => self.column(id),
            E::CompoundIdentifier(ids) => self.qualified_name(ids),
            E::Value(v) => self.literal(e, &v.value),
            E::TypedString(t) => {
                let text = match &t.value.value {
                    ast::Value::SingleQuotedString(s) => s.clone(),
                    other => other.to_string(),
                };
                match t.data_type {
                    ast::DataType::Date => match parse_date(&text) {
                        Some(d) => Ok(node(ETy::Date, NodeK::Lit(Lit::Date(d)))),
                        None => fail(e, format!("`{text}` is not a date (YYYY-MM-DD)")),
                    },
                    ast::DataType::Timestamp(..) | ast::DataType::Datetime(_) => {
                        match parse_timestamp(&text) {
                            Some(t) => Ok(node(ETy::Timestamp, NodeK::Lit(Lit::Ts(t)))),
                            None => fail(
                                e,
                                format!(
                                    "`{text}` is not a timestamp (YYYY-MM-DD HH:MM:SS[.ffffff])"
                                ),
                            ),
                        }
                    }
                    _ => fail(
                        e,
                        format!("literals of type {} are not supported", t.data_type),
                    ),
                }
            }
            E::Interval(iv) => {
                const SECOND: i64 = 1_000_000;
                let per = match &iv.leading_field {
                    Some(ast::DateTimeField::Day | ast::DateTimeField::Days) => 86_400 * SECOND,
                    Some(ast::DateTimeField::Week(_) | ast::DateTimeField::Weeks) => {
                        7 * 86_400 * SECOND
                    }
                    Some(ast::DateTimeField::Hour | ast::DateTimeField::Hours) => 3_600 * SECOND,
                    Some(ast::DateTimeField::Minute | ast::DateTimeField::Minutes) => 60 * SECOND,
                    Some(ast::DateTimeField::Second | ast::DateTimeField::Seconds) => SECOND,
                    _ => {
                        return fail(
                            e,
                            "intervals are whole weeks, days, hours, minutes or seconds (INTERVAL 5 DAY); add months and years in your own terms",
                        );
                    }
                };
                let n = match &*iv.value {
                    E::Value(v) => match &v.value {
                        ast::Value::Number(n, _) => n.parse::<i64>().ok(),
                        ast::Value::SingleQuotedString(s) => s.trim().parse::<i64>().ok(),
                        _ => None,
                    },
                    _ => None,
                };
                match n.and_then(|n| n.checked_mul(per)) {
                    Some(us) => Ok(node(ETy::Interval, NodeK::Lit(Lit::Int(us)))),
                    None => fail(e, "an interval needs a whole number of its unit"),
                }
            }
            E::UnaryOp { op, expr } => {
                let x = self.node(expr)?;
                match op {
                    U::Plus if x.ty.numeric() => Ok(x),
                    U::Minus if x.ty.negatable() => {
                        // Literal negatives stay literals.
                        if let NodeK::Lit(l) = &x.kind {
                            let neg = match l {
                                Lit::Int(v) => v.checked_neg().map(Lit::Int),
                                Lit::Float(v) => Some(Lit::Float(-v)),
                                Lit::Dec(v) => Some(Lit::Dec(-v)),
                                _ => None,
                            };
                            if let Some(l) = neg {
                                return Ok(node(x.ty, NodeK::Lit(l)));
                            }
                        }
                        Ok(node(x.ty, NodeK::Neg(Box::new(x))))
                    }
                    U::Not if matches!(x.ty, ETy::Bool | ETy::Null) => {
                        Ok(node(ETy::Bool, NodeK::Not(Box::new(cast(x, ETy::Bool)))))
                    }
                    _ => fail(
                        e,
                        format!("type mismatch: `{op}` of {}", x.ty.with_article()),
                    ),
                }
            }
            E::BinaryOp { left, op, right } => self.binary(e, left, op, right),
            E::IsNull(x) | E::IsNotNull(x) => {
                let x = self.node(x)?;
                Ok(node(
                    ETy::Bool,
                    NodeK::IsNull(Box::new(x), matches!(e, E::IsNotNull(_))),
                ))
            }
            E::Between {
                expr,
                negated,
                low,
                high,
            } => {
                let x = self.node(expr)?;
                let lo = self.node(low)?;
                let hi = self.node(high)?;
                let a = self.compare(e, Cmp::Ge, x.clone(), lo)?;
                let b = self.compare(e, Cmp::Le, x, hi)?;
                let both = node(ETy::Bool, NodeK::And(Box::new(a), Box::new(b)));
                Ok(if *negated {
                    node(ETy::Bool, NodeK::Not(Box::new(both)))
                } else {
                    both
                })
            }
            E::InList {
                expr,
                list,
                negated,
            } => {
                let x = self.node(expr)?;
                let mut items = Vec::with_capacity(list.len());
                for item in list {
                    let v = self.node(item)?;
                    if unify(&[x.ty, v.ty]).is_none() {
                        return fail(
                            item,
                            format!(
                                "type mismatch: cannot compare {} with {}",
                                x.ty.with_article(),
                                v.ty.with_article()
                            ),
                        );
                    }
                    items.push(v);
                }
                let mut tys = vec![x.ty];
                tys.extend(items.iter().map(|v| v.ty));
                let Some(ty) = unify(&tys) else {
                    return fail(
                        e,
                        format!(
                            "type mismatch: the IN list mixes {}",
                            tys.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ")
                        ),
                    );
                };
                let items = items.into_iter().map(|v| cast(v, ty)).collect();
                let any = node(ETy::Bool, NodeK::In(Box::new(cast(x, ty)), items));
                Ok(if *negated {
                    node(ETy::Bool, NodeK::Not(Box::new(any)))
                } else {
                    any
                })
            }
            E::Case {
                operand,
                conditions,
                else_result,
                ..
            } => {
                let operand = operand.as_ref().map(|o| self.node(o)).transpose()?;
                let mut whens = Vec::new();
                for w in conditions {
                    let c = self.node(&w.condition)?;
                    let c = match &operand {
                        Some(o) => self.compare(&w.condition, Cmp::Eq, o.clone(), c)?,
                        None if matches!(c.ty, ETy::Bool | ETy::Null) => cast(c, ETy::Bool),
                        None => {
                            return fail(
                                &w.condition,
                                format!(
                                    "type mismatch: a WHEN condition must be a boolean, not {}",
                                    c.ty.with_article()
                                ),
                            );
                        }
                    };
                    whens.push((c, self.node(&w.result)?));
                }
                let other = else_result.as_ref().map(|x| self.node(x)).transpose()?;
                let mut tys: Vec<ETy> = whens.iter().map(|(_, r)| r.ty).collect();
                tys.extend(other.iter().map(|o| o.ty));
                let Some(ty) = unify(&tys) else {
                    return fail(
                        e,
                        format!(
                            "type mismatch: the CASE results are {}",
                            tys.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ")
                        ),
                    );
                };
                let whens = whens.into_iter().map(|(c, r)| (c, cast(r, ty))).collect();
                Ok(node(
                    ty,
                    NodeK::Case(whens, other.map(|o| Box::new(cast(o, ty)))),
                ))
            }
            E::Cast {
                expr, data_type, ..
            } => {
                let x = self.node(expr)?;
                let to = match data_type {
                    ast::DataType::Int(_)
                    | ast::DataType::Integer(_)
                    | ast::DataType::BigInt(_)
                    | ast::DataType::Int64 => ETy::Int,
                    ast::DataType::Double(_)
                    | ast::DataType::DoublePrecision
                    | ast::DataType::Float(_)
                    | ast::DataType::Float64
                    | ast::DataType::Real => ETy::Float,
                    ast::DataType::Varchar(_) | ast::DataType::Text | ast::DataType::String(_) => {
                        ETy::Str
                    }
                    ast::DataType::Date => ETy::Date,
                    ast::DataType::Timestamp(..) | ast::DataType::Datetime(_) => ETy::Timestamp,
                    ast::DataType::Boolean | ast::DataType::Bool => ETy::Bool,
                    ast::DataType::Decimal(info) | ast::DataType::Numeric(info) => {
                        let (p, s) = match info {
                            ast::ExactNumberInfo::None => (18, 3),
                            ast::ExactNumberInfo::Precision(p) => (*p, 0),
                            ast::ExactNumberInfo::PrecisionAndScale(p, s) => (*p, *s),
                        };
                        if !(1..=u64::from(MAX_PRECISION)).contains(&p) || s < 0 || s as u64 > p {
                            return fail(
                                e,
                                format!(
                                    "decimal({p}, {s}) is not a decimal type (precision 1 to 38, scale 0 to precision)"
                                ),
                            );
                        }
                        ETy::Decimal(p as u8, s as i8)
                    }
                    other => return fail(e, format!("CAST to {other} is not supported")),
                };
                let ok = x.ty == to
                    || x.ty == ETy::Null
                    || to == ETy::Str
                    || (x.ty.numeric() && to.numeric())
                    || (matches!(x.ty, ETy::Str | ETy::Date | ETy::Timestamp)
                        && matches!(to, ETy::Date | ETy::Timestamp));
                if !ok {
                    return fail(
                        e,
                        format!(
                            "type mismatch: cannot cast {} to {}",
                            x.ty.with_article(),
                            to.name()
                        ),
                    );
                }
                Ok(cast(x, to))
            }
            E::Function(f) => self.function(e, f),
            _ => fail(e, format!("`{e}` is not supported in a spec expression")),
        }
    }

    fn column(&mut self, id: &ast::Ident) -> R<TNode> {
        let Some(i) = self.siblings.iter().position(|(n, _)| *n == id.value) else {
            return fail_at(
                id.span.start.column,
                format!(
                    "unknown name `{}`; the fields it can read are {}",
                    id.value,
                    self.siblings
                        .iter()
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        };
        let Some(ty) = ETy::of(self.siblings[i].1) else {
            return fail_at(
                id.span.start.column,
                format!(
                    "field `{}` is of type {}, which expressions cannot read",
                    id.value, self.siblings[i].1
                ),
            );
        };
        if !self.inputs.contains(&id.value) {
            self.inputs.push(id.value.clone());
        }
        Ok(node(ty, NodeK::Col(i)))
    }

    /// `q.x`: a field of the parent row or of a drawn row.
    fn qualified_name(&mut self, ids: &[ast::Ident]) -> R<TNode> {
        let column = ids.first().map_or(1, |i| i.span.start.column);
        let [q, x] = ids else {
            return fail_at(
                column,
                format!(
                    "`{}`: a qualified name is `parent.FIELD` or `DRAW.FIELD`",
                    ids.iter()
                        .map(|i| i.value.as_str())
                        .collect::<Vec<_>>()
                        .join(".")
                ),
            );
        };
        let dt = (self.qualified)(&q.value, &x.value).map_err(|m| ExprError {
            column: column.max(1),
            message: m,
        })?;
        let Some(ty) = ETy::of(&dt) else {
            return fail_at(
                column,
                format!(
                    "`{}.{}` is of type {dt}, which expressions cannot read",
                    q.value, x.value
                ),
            );
        };
        let key = (q.value.clone(), x.value.clone());
        let k = match self.reads.iter().position(|r| *r == key) {
            Some(k) => k,
            None => {
                self.reads.push(key);
                self.reads.len() - 1
            }
        };
        Ok(node(ty, NodeK::Col(self.siblings.len() + k)))
    }

    fn literal(&mut self, at: &ast::Expr, v: &ast::Value) -> R<TNode> {
        Ok(match v {
            ast::Value::Null => node(ETy::Null, NodeK::Lit(Lit::Null)),
            ast::Value::Boolean(b) => node(ETy::Bool, NodeK::Lit(Lit::Bool(*b))),
            ast::Value::SingleQuotedString(s) => node(ETy::Str, NodeK::Lit(Lit::Str(s.clone()))),
            ast::Value::Number(n, _) => {
                if let Ok(i) = n.parse::<i64>() {
                    return Ok(node(ETy::Int, NodeK::Lit(Lit::Int(i))));
                }
                if n.contains(['e', 'E']) {
                    return match n.parse::<f64>() {
                        Ok(x) => Ok(node(ETy::Float, NodeK::Lit(Lit::Float(x)))),
                        Err(_) => fail(at, format!("`{n}` is not a number")),
                    };
                }
                // A decimal literal: its digits set its precision and scale.
                let (int, frac) = n.split_once('.').unwrap_or((n, ""));
                let digits = format!("{int}{frac}");
                let Ok(units) = digits.parse::<i128>() else {
                    return fail(at, format!("`{n}` is not a number"));
                };
                let s = frac.len();
                let p = digits.trim_start_matches('0').len().max(s).max(1);
                if p > MAX_PRECISION as usize {
                    return fail(at, format!("`{n}` has more than {MAX_PRECISION} digits"));
                }
                node(ETy::Decimal(p as u8, s as i8), NodeK::Lit(Lit::Dec(units)))
            }
            other => return fail(at, format!("literal `{other}` is not supported")),
        })
    }

    fn compare(&mut self, at: &impl Spanned, op: Cmp, a: TNode, b: TNode) -> R<TNode> {
        let Some(ty) = unify(&[a.ty, b.ty]) else {
            return fail(
                at,
                format!(
                    "type mismatch: cannot compare {} with {}",
                    a.ty.with_article(),
                    b.ty.with_article()
                ),
            );
        };
        Ok(node(
            ETy::Bool,
            NodeK::Cmp(op, Box::new(cast(a, ty)), Box::new(cast(b, ty))),
        ))
    }

    fn binary(&mut self, e: &ast::Expr, l: &ast::Expr, op: &B, r: &ast::Expr) -> R<TNode> {
        let a = self.node(l)?;
        let b = self.node(r)?;
        let mismatch = |a: &TNode, b: &TNode| {
            fail(
                e,
                format!("type mismatch: {} {op} {}", a.ty.name(), b.ty.name()),
            )
        };
        let cmp = match op {
            B::Eq => Some(Cmp::Eq),
            B::NotEq => Some(Cmp::Ne),
            B::Lt => Some(Cmp::Lt),
            B::LtEq => Some(Cmp::Le),
            B::Gt => Some(Cmp::Gt),
            B::GtEq => Some(Cmp::Ge),
            _ => None,
        };
        if let Some(c) = cmp {
            return self.compare(e, c, a, b);
        }
        let arith = match op {
            B::Plus => Arith::Add,
            B::Minus => Arith::Sub,
            B::Multiply => Arith::Mul,
            B::Divide => Arith::Div,
            B::DuckIntegerDivide => Arith::IntDiv,
            B::Modulo => Arith::Rem,
            B::And | B::Or => {
                if !matches!(a.ty, ETy::Bool | ETy::Null) || !matches!(b.ty, ETy::Bool | ETy::Null)
                {
                    return mismatch(&a, &b);
                }
                let (a, b) = (Box::new(cast(a, ETy::Bool)), Box::new(cast(b, ETy::Bool)));
                return Ok(node(
                    ETy::Bool,
                    if *op == B::And {
                        NodeK::And(a, b)
                    } else {
                        NodeK::Or(a, b)
                    },
                ));
            }
            B::StringConcat => {
                // A chain of `||` is one node.
                let mut parts = match a.kind {
                    NodeK::Concat(parts) => parts,
                    _ => vec![cast(a, ETy::Str)],
                };
                parts.push(cast(b, ETy::Str));
                return Ok(node(ETy::Str, NodeK::Concat(parts)));
            }
            _ => {
                return fail(
                    e,
                    format!("operator `{op}` is not supported in a spec expression"),
                );
            }
        };
        // Dates: plus or minus days, or the days between two dates (a
        // null beside a date is a null number of days).
        let a = if (a.ty, b.ty) == (ETy::Null, ETy::Date) {
            cast(a, ETy::Int)
        } else {
            a
        };
        let b = if (a.ty, b.ty) == (ETy::Date, ETy::Null) {
            cast(b, ETy::Int)
        } else {
            b
        };
        // An interval of whole days beside a date is days; other intervals
        // make the date a timestamp, as DuckDB's `date + INTERVAL 1 HOUR`.
        let whole_days = |n: &TNode| match n.kind {
            NodeK::Lit(Lit::Int(us)) if n.ty == ETy::Interval && us % 86_400_000_000 == 0 => {
                Some(node(ETy::Int, NodeK::Lit(Lit::Int(us / 86_400_000_000))))
            }
            _ => None,
        };
        let (a, b) = match (a.ty, b.ty) {
            (ETy::Date, ETy::Interval) => match whole_days(&b) {
                Some(days) => (a, days),
                None => (cast(a, ETy::Timestamp), b),
            },
            (ETy::Interval, ETy::Date) => match whole_days(&a) {
                Some(days) => (days, b),
                None => (a, cast(b, ETy::Timestamp)),
            },
            _ => (a, b),
        };
        match (a.ty, b.ty, arith) {
            (ETy::Timestamp, ETy::Interval, Arith::Add | Arith::Sub) => {
                return Ok(node(
                    ETy::Timestamp,
                    NodeK::DateAdd(Box::new(a), Box::new(b), arith == Arith::Sub),
                ));
            }
            (ETy::Interval, ETy::Timestamp, Arith::Add) => {
                return Ok(node(
                    ETy::Timestamp,
                    NodeK::DateAdd(Box::new(b), Box::new(a), false),
                ));
            }
            (ETy::Interval, ETy::Interval, Arith::Add | Arith::Sub)
            | (ETy::Interval, ETy::Int, Arith::Mul)
            | (ETy::Int, ETy::Interval, Arith::Mul) => {
                let (a, b) = (cast(a, ETy::Int), cast(b, ETy::Int));
                let sum = node(ETy::Int, NodeK::Arith(arith, Box::new(a), Box::new(b)));
                return Ok(node(ETy::Interval, NodeK::Cast(Box::new(sum))));
            }
            (ETy::Date, ETy::Int, Arith::Add | Arith::Sub) => {
                return Ok(node(
                    ETy::Date,
                    NodeK::DateAdd(Box::new(a), Box::new(b), arith == Arith::Sub),
                ));
            }
            (ETy::Int, ETy::Date, Arith::Add) => {
                return Ok(node(
                    ETy::Date,
                    NodeK::DateAdd(Box::new(b), Box::new(a), false),
                ));
            }
            (ETy::Date, ETy::Date, Arith::Sub) => {
                return Ok(node(ETy::Int, NodeK::DateDiff(Box::new(a), Box::new(b))));
            }
            _ => {}
        }
        let Some(common) = numeric_common(a.ty, b.ty) else {
            return mismatch(&a, &b);
        };
        match arith {
            Arith::Div => {
                // Floating-point division, as DuckDB's `/`.
                let (a, b) = (cast(a, ETy::Float), cast(b, ETy::Float));
                Ok(node(
                    ETy::Float,
                    NodeK::Arith(arith, Box::new(a), Box::new(b)),
                ))
            }
            Arith::IntDiv | Arith::Rem => {
                if common != ETy::Int {
                    return fail(
                        e,
                        format!(
                            "`{op}` is for integers, not {} and {}",
                            a.ty.name(),
                            b.ty.name()
                        ),
                    );
                }
                let (a, b) = (cast(a, ETy::Int), cast(b, ETy::Int));
                Ok(node(
                    ETy::Int,
                    NodeK::Arith(arith, Box::new(a), Box::new(b)),
                ))
            }
            _ => match common {
                ETy::Decimal(..) => {
                    let da = if a.ty == ETy::Int {
                        cast(a, INT_AS_DECIMAL)
                    } else {
                        a
                    };
                    let db = if b.ty == ETy::Int {
                        cast(b, INT_AS_DECIMAL)
                    } else {
                        b
                    };
                    let (ETy::Decimal(p1, s1), ETy::Decimal(p2, s2)) = (da.ty, db.ty) else {
                        return mismatch(&da, &db);
                    };
                    let (p, s) = if arith == Arith::Mul {
                        (p1 as i16 + p2 as i16, s1 as i16 + s2 as i16)
                    } else {
                        let s = s1.max(s2) as i16;
                        (
                            (p1 as i16 - s1 as i16).max(p2 as i16 - s2 as i16) + s + 1,
                            s,
                        )
                    };
                    // As DuckDB: the precision is capped at 38 (a value
                    // past it is an error when generated); a scale past 38
                    // cannot be stored at all.
                    if s > MAX_PRECISION as i16 {
                        return fail(
                            e,
                            format!(
                                "decimal overflow: {} {op} {} needs a scale of {s}, more than {MAX_PRECISION}; cast an operand to fewer decimal places",
                                da.ty.name(),
                                db.ty.name()
                            ),
                        );
                    }
                    let p = p.min(MAX_PRECISION as i16);
                    Ok(node(
                        ETy::Decimal(p as u8, s as i8),
                        NodeK::Arith(arith, Box::new(da), Box::new(db)),
                    ))
                }
                t => Ok(node(
                    t,
                    NodeK::Arith(arith, Box::new(cast(a, t)), Box::new(cast(b, t))),
                )),
            },
        }
    }

    fn function(&mut self, e: &ast::Expr, f: &ast::Function) -> R<TNode> {
        let name = f.name.to_string().to_ascii_lowercase();
        let ast::FunctionArguments::List(list) = &f.args else {
            return fail(e, format!("`{name}` needs arguments in parentheses"));
        };
        let mut args = Vec::new();
        for a in &list.args {
            match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) => args.push(x),
                _ => return fail(e, format!("`{name}` takes plain arguments")),
            }
        }
        let int_literal = |x: &ast::Expr, this: &mut Self| -> R<i64> {
            let n = this.node(x)?;
            match n.kind {
                NodeK::Lit(Lit::Int(v)) => Ok(v),
                _ => fail(x, format!("`{name}` takes an integer literal here")),
            }
        };
        match name.as_str() {
            "uniform" => {
                if args.len() != 2 {
                    return fail(e, "uniform(min, max) takes two integers");
                }
                let (min, max) = (int_literal(args[0], self)?, int_literal(args[1], self)?);
                if min > max {
                    return fail(e, format!("uniform needs min <= max, not {min} and {max}"));
                }
                self.salts += 1;
                Ok(node(
                    ETy::Int,
                    NodeK::Uniform {
                        min,
                        max,
                        salt: self.salts,
                    },
                ))
            }
            "coalesce" | "least" | "greatest" | "concat" => {
                if args.is_empty() {
                    return fail(e, format!("`{name}` needs at least one argument"));
                }
                let nodes = args.iter().map(|x| self.node(x)).collect::<R<Vec<_>>>()?;
                if name == "concat" {
                    let parts = nodes.into_iter().map(|n| cast(n, ETy::Str)).collect();
                    return Ok(node(ETy::Str, NodeK::ConcatNullsEmpty(parts)));
                }
                let tys: Vec<ETy> = nodes.iter().map(|n| n.ty).collect();
                let Some(ty) = unify(&tys) else {
                    return fail(
                        e,
                        format!(
                            "type mismatch: the arguments of `{name}` are {}",
                            tys.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ")
                        ),
                    );
                };
                let nodes = nodes.into_iter().map(|n| cast(n, ty)).collect();
                Ok(node(
                    ty,
                    match name.as_str() {
                        "coalesce" => NodeK::Coalesce(nodes),
                        g => NodeK::Extreme(nodes, g == "greatest"),
                    },
                ))
            }
            "lpad" => {
                if args.len() != 3 {
                    return fail(e, "lpad(string, length, fill) takes three arguments");
                }
                let s = self.node(args[0])?;
                let len = int_literal(args[1], self)?;
                let fill = match self.node(args[2])?.kind {
                    NodeK::Lit(Lit::Str(f)) if !f.is_empty() => f,
                    _ => return fail(args[2], "lpad's fill is a non-empty string literal"),
                };
                if !(0..=1 << 16).contains(&len) {
                    return fail(args[1], "lpad's length must be between 0 and 65536");
                }
                Ok(node(
                    ETy::Str,
                    NodeK::Lpad(Box::new(cast(s, ETy::Str)), len as usize, fill),
                ))
            }
            "round" => {
                if !(1..=2).contains(&args.len()) {
                    return fail(e, "round(x[, digits]) takes one or two arguments");
                }
                let x = self.node(args[0])?;
                let digits = match args.get(1) {
                    Some(d) => int_literal(d, self)?,
                    None => 0,
                };
                if digits < 0 {
                    // To a multiple of 10^-digits.
                    if digits < -i64::from(MAX_PRECISION) {
                        return fail(e, format!("round takes at least -{MAX_PRECISION} digits"));
                    }
                    let k = digits.unsigned_abs() as u32;
                    let ty = match x.ty {
                        ETy::Decimal(p, s) => {
                            ETy::Decimal((p as i16 - s as i16 + 1).clamp(1, 38) as u8, 0)
                        }
                        ETy::Int => ETy::Int,
                        _ => {
                            return fail(
                                e,
                                format!(
                                    "round to negative digits takes a decimal or an integer, not a {}",
                                    x.ty.name()
                                ),
                            );
                        }
                    };
                    return Ok(node(ty, NodeK::RoundTens(Box::new(x), k)));
                }
                match x.ty {
                    ETy::Decimal(p, s) => {
                        let digits = digits.clamp(0, i64::from(s)) as i8;
                        // One more integer digit for the carry.
                        let p = (p as i16 - s as i16 + digits as i16 + 1).min(MAX_PRECISION as i16);
                        Ok(cast(x, ETy::Decimal(p.max(1) as u8, digits)))
                    }
                    ETy::Int => Ok(x),
                    ETy::Float if digits == 0 => Ok(node(
                        ETy::Float,
                        NodeK::Cast(Box::new(node(
                            ETy::Decimal(MAX_PRECISION, 0),
                            NodeK::Cast(Box::new(x)),
                        ))),
                    )),
                    _ => fail(
                        e,
                        format!(
                            "round takes a decimal or an integer (or a double to 0 digits), not a {}",
                            x.ty.name()
                        ),
                    ),
                }
            }
            _ => fail(
                e,
                format!(
                    "unknown function `{name}`; spec expressions have coalesce, least, greatest, concat, lpad, round, uniform"
                ),
            ),
        }
    }
}

/// Days since 1970-01-01 of `YYYY-MM-DD`.
fn parse_date(s: &str) -> Option<i32> {
    use chrono::NaiveDate;
    let d = NaiveDate::parse_from_str(s.trim(), "%Y-%m-%d").ok()?;
    let epoch = NaiveDate::from_ymd_opt(1970, 1, 1)?;
    i32::try_from((d - epoch).num_days()).ok()
}

/// Microseconds since 1970-01-01 00:00:00 of `YYYY-MM-DD[ HH:MM:SS[.f]]`.
fn parse_timestamp(s: &str) -> Option<i64> {
    use chrono::NaiveDateTime;
    let s = s.trim();
    let t = NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S%.f")
        .or_else(|_| NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f"))
        .ok()
        .or_else(|| {
            chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
                .ok()?
                .and_hms_opt(0, 0, 0)
        })?;
    Some(t.and_utc().timestamp_micros())
}

/// Whether a value of type `ty` can fill a field of Arrow type `to`, and
/// if not, why.
pub(crate) fn check_target(tree: &TNode, to: &DataType) -> Result<(), String> {
    let ty = tree.ty;
    let ok = match to {
        DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64 => ty == ETy::Int,
        DataType::Float32 | DataType::Float64 => ty.numeric(),
        DataType::Decimal128(..) | DataType::Decimal256(..) => {
            matches!(ty, ETy::Int | ETy::Decimal(..) | ETy::Float)
        }
        DataType::Date32 => ty == ETy::Date,
        DataType::Timestamp(..) => matches!(ty, ETy::Timestamp | ETy::Date),
        DataType::Boolean => ty == ETy::Bool,
        DataType::Utf8 | DataType::LargeUtf8 => ty == ETy::Str,
        DataType::Dictionary(_, v) if **v == DataType::Utf8 => ty == ETy::Str,
        _ => return Err(format!("an `expr` cannot fill a field of type {to}")),
    };
    if ok || ty == ETy::Null {
        Ok(())
    } else {
        let hint = if matches!(ty, ETy::Decimal(..) | ETy::Float) && ETy::of(to) == Some(ETy::Int) {
            " (CAST it to an integer: CAST(... AS BIGINT) rounds)"
        } else {
            ""
        };
        Err(format!(
            "type mismatch: the expression gives {}, but the field is {to}{hint}",
            ty.with_article()
        ))
    }
}

/// Whether `tree` is a boolean test (a `when` condition).
pub(crate) fn is_test(tree: &TNode) -> bool {
    matches!(tree.ty, ETy::Bool | ETy::Null)
}

/// Why `tree` is not a test.
pub(crate) fn not_a_test(tree: &TNode) -> String {
    format!(
        "a condition is a boolean test (`x < 10`, `d BETWEEN DATE '1995-01-01' AND DATE '1995-12-31'`), not {}",
        tree.ty.with_article()
    )
}

/// The rows where test `tree` is true (null is false), one bit per row.
pub(crate) fn test(tree: &TNode, inp: &Inputs<'_>) -> Result<arrow_buffer::BooleanBuffer, Error> {
    let v = evaluate(tree, inp, &DataType::Boolean)?;
    let b = v
        .as_boolean_opt()
        .ok_or_else(|| expr_error("a condition is not a boolean"))?;
    Ok(null_as_false(b).values().clone())
}

/// What an expression reads while it is evaluated for a batch.
pub(crate) struct Inputs<'a> {
    /// The arrays of the siblings (those it reads are present).
    pub columns: &'a [Option<ArrayRef>],
    /// The rows' ids.
    pub ids: &'a [u64],
    /// The field's own stream, for `uniform`.
    pub key: StreamKey,
}

/// An evaluated node: a column, or one value for every row.
enum Val {
    Array(ArrayRef),
    Scalar(ArrayRef),
}

impl Val {
    /// `a` as a constant (`scalar`: one row for all) or a column.
    fn of(a: ArrayRef, scalar: bool) -> Val {
        if scalar {
            Val::Scalar(a)
        } else {
            Val::Array(a)
        }
    }

    fn datum(&self) -> Box<dyn Datum + '_> {
        match self {
            Val::Array(a) => Box::new(a.clone()),
            Val::Scalar(s) => Box::new(Scalar::new(s.clone())),
        }
    }

    /// The value as a column of `n` rows.
    fn array(self, n: usize) -> Result<ArrayRef, Error> {
        match self {
            Val::Array(a) => Ok(a),
            Val::Scalar(s) => {
                let idx = arrow_array::UInt32Array::from(vec![0u32; n]);
                Ok(arrow_select::take::take(&s, &idx, None)?)
            }
        }
    }

    fn map(self, f: impl FnOnce(&ArrayRef) -> Result<ArrayRef, Error>) -> Result<Val, Error> {
        Ok(match self {
            Val::Array(a) => Val::Array(f(&a)?),
            Val::Scalar(s) => Val::Scalar(f(&s)?),
        })
    }

    fn is_scalar(&self) -> bool {
        matches!(self, Val::Scalar(_))
    }
}

fn expr_error(m: impl std::fmt::Display) -> Error {
    Error::InvalidDistribution(format!("expression: {m}"))
}

/// Evaluates `tree` for the rows of `inp`, as a column of Arrow type
/// `to` (the field's).
pub(crate) fn evaluate(tree: &TNode, inp: &Inputs<'_>, to: &DataType) -> Result<ArrayRef, Error> {
    let n = inp.ids.len();
    // Decimal arithmetic stored at a smaller scale rounds as it computes.
    if let (
        NodeK::Arith(Arith::Add | Arith::Sub | Arith::Mul, ..),
        ETy::Decimal(_, s),
        DataType::Decimal128(_, to_s),
    ) = (&tree.kind, tree.ty, to)
        && *to_s >= 0
        && *to_s < s
    {
        let v = decimal_node(tree, inp, (s - to_s) as u32)?.array(n)?;
        let ty = match v.data_type() {
            DataType::Decimal128(p, s) => ETy::Decimal(*p, *s),
            _ => return Err(expr_error("a decimal operation gave no decimal")),
        };
        return convert(&v, ty, to);
    }
    let v = eval(tree, inp)?.array(n)?;
    convert(&v, tree.ty, to)
}

/// Decimal `+`, `-` or `*` node `t`, its result rounded to `round` fewer
/// digits of scale in the same pass.
fn decimal_node(t: &TNode, inp: &Inputs<'_>, round: u32) -> Result<Val, Error> {
    let NodeK::Arith(op, a, b) = &t.kind else {
        return Err(expr_error("a decimal operation that is not arithmetic"));
    };
    // An integer made a decimal of scale 0 is read as the integer (its
    // units): no decimal column is made for it.
    fn unit(n: &TNode) -> &TNode {
        match &n.kind {
            NodeK::Cast(x) if x.ty == ETy::Int && matches!(n.ty, ETy::Decimal(_, 0)) => x,
            _ => n,
        }
    }
    let (a, b) = (unit(a), unit(b));
    let (x, y) = (eval_int32(a, inp)?, eval_int32(b, inp)?);
    // The most digits each operand's values have.
    let digits = |node: &TNode| match (&node.kind, node.ty) {
        (NodeK::Lit(Lit::Int(v)), _) => {
            v.unsigned_abs().checked_ilog10().map_or(1, |d| d + 1) as i16
        }
        (NodeK::Col(i), ETy::Int) => match inp
            .columns
            .get(*i)
            .and_then(|c| c.as_ref())
            .map(|c| c.data_type())
        {
            Some(DataType::Int8 | DataType::UInt8) => 3,
            Some(DataType::Int16 | DataType::UInt16) => 5,
            Some(DataType::Int32 | DataType::UInt32) => 10,
            _ => 19,
        },
        (_, ETy::Decimal(p, _)) => i16::from(p),
        _ => 19,
    };
    let n = inp.ids.len();
    decimal_arith(
        *op,
        &x,
        a.ty,
        digits(a),
        &y,
        b.ty,
        digits(b),
        t.ty,
        n,
        round,
    )
}

/// `a` (of expression type `ty`) as Arrow type `to`: decimals rounded
/// half away from zero, overflow an error.
fn convert(a: &ArrayRef, ty: ETy, to: &DataType) -> Result<ArrayRef, Error> {
    if a.data_type() == to {
        return Ok(a.clone());
    }
    // Timestamps change unit by a cast and time zone by a new label (a
    // cast between zones would move the instants to local times).
    if let DataType::Timestamp(from_unit, Some(_)) = a.data_type() {
        let plain = DataType::Timestamp(*from_unit, None);
        let a = arrow_array::make_array(a.to_data().into_builder().data_type(plain).build()?);
        return convert(&a, ty, to);
    }
    if let (DataType::Timestamp(..), DataType::Timestamp(unit, Some(_))) = (a.data_type(), to) {
        let plain = convert(a, ty, &DataType::Timestamp(*unit, None))?;
        return Ok(arrow_array::make_array(
            plain
                .to_data()
                .into_builder()
                .data_type(to.clone())
                .build()?,
        ));
    }
    let options = arrow_cast::CastOptions {
        safe: false,
        ..Default::default()
    };
    if let (ETy::Decimal(_, s), DataType::Decimal128(p, to_s)) = (ty, to)
        && let Some(d) = a.as_any().downcast_ref::<Decimal128Array>()
    {
        return rescale_decimal(d, s, *p, *to_s);
    }
    let out = arrow_cast::cast_with_options(a, to, &options);
    out.map_err(|e| expr_error(format!("cannot store a value as {to}: {e}")))
}

fn eval(t: &TNode, inp: &Inputs<'_>) -> Result<Val, Error> {
    let n = inp.ids.len();
    Ok(match &t.kind {
        NodeK::Col(i) => {
            let a = inp
                .columns
                .get(*i)
                .and_then(|c| c.clone())
                .ok_or_else(|| expr_error("a sibling was not generated first"))?;
            let want = t.ty.arrow();
            if *a.data_type() == want {
                Val::Array(a)
            } else {
                Val::Array(convert(&a, t.ty, &want)?)
            }
        }
        NodeK::Lit(l) => Val::Scalar(literal_array(l, t.ty)?),
        NodeK::Neg(x) => eval(x, inp)?.map(|a| Ok(arrow_arith::numeric::neg(a)?))?,
        NodeK::Arith(Arith::Add | Arith::Sub | Arith::Mul, ..)
            if matches!(t.ty, ETy::Decimal(..)) =>
        {
            decimal_node(t, inp, 0)?
        }
        NodeK::Arith(op, a, b) => {
            let (x, y) = (eval(a, inp)?, eval(b, inp)?);
            let both_scalar = x.is_scalar() && y.is_scalar();
            let y = if matches!(op, Arith::Div | Arith::IntDiv | Arith::Rem) {
                // Division by zero (or -0.0) is null.
                let scalar = y.is_scalar();
                let ya = match y {
                    Val::Array(a) | Val::Scalar(a) => a,
                };
                let is_zero = match ya.as_any().downcast_ref::<Float64Array>() {
                    Some(f) => BooleanArray::from_unary(f, |v| v == 0.0),
                    None => {
                        let zero = arrow_cast::cast(
                            &literal_array(&Lit::Int(0), ETy::Int)?,
                            ya.data_type(),
                        )?;
                        arrow_ord::cmp::eq(&ya, &Scalar::new(zero))?
                    }
                };
                Val::of(arrow_select::nullif::nullif(&ya, &is_zero)?, scalar)
            } else {
                y
            };
            let (xd, yd) = (x.datum(), y.datum());
            let r = match op {
                Arith::Add => arrow_arith::numeric::add(&*xd, &*yd),
                Arith::Sub => arrow_arith::numeric::sub(&*xd, &*yd),
                Arith::Mul => arrow_arith::numeric::mul(&*xd, &*yd),
                Arith::Div | Arith::IntDiv => arrow_arith::numeric::div(&*xd, &*yd),
                Arith::Rem => arrow_arith::numeric::rem(&*xd, &*yd),
            }
            .map_err(expr_error)?;
            let r = match t.ty {
                // Decimal results carry the scale computed when checked.
                ETy::Decimal(..) if *r.data_type() != t.ty.arrow() => {
                    convert(&r, t.ty, &t.ty.arrow())?
                }
                _ => r,
            };
            Val::of(r, both_scalar)
        }
        NodeK::DateAdd(d, days, sub) => {
            let (x, y) = (eval(d, inp)?, eval_int32(days, inp)?);
            if is_null_constant(&x) || is_null_constant(&y) {
                return Ok(null_constant(t.ty));
            }
            let both_scalar = x.is_scalar() && y.is_scalar();
            let len = if both_scalar { 1 } else { n };
            let (dates, add) = (Units::of(&x, len)?, Units::of(&y, len)?);
            let sign: i128 = if *sub { -1 } else { 1 };
            let nulls = arrow_buffer::NullBuffer::union(dates.nulls, add.nulls);
            let r: ArrayRef = if t.ty == ETy::Timestamp {
                let v = offsets::<i64>(&dates, &add, len, sign, "a timestamp out of range")?;
                Arc::new(TimestampMicrosecondArray::new(v.into(), nulls))
            } else {
                let v = offsets::<i32>(&dates, &add, len, sign, "a date out of range")?;
                Arc::new(Date32Array::new(v.into(), nulls))
            };
            Val::of(r, both_scalar)
        }
        NodeK::DateDiff(a, b) => {
            let (x, y) = (eval(a, inp)?, eval(b, inp)?);
            let both_scalar = x.is_scalar() && y.is_scalar();
            let to_days = |a: &ArrayRef| -> Result<ArrayRef, Error> {
                Ok(arrow_cast::cast(
                    &arrow_cast::cast(a, &DataType::Int32)?,
                    &DataType::Int64,
                )?)
            };
            let (x, y) = (x.map(to_days)?, y.map(to_days)?);
            let r = arrow_arith::numeric::sub(&*x.datum(), &*y.datum()).map_err(expr_error)?;
            Val::of(r, both_scalar)
        }
        NodeK::Cmp(op, a, b) => {
            let (x, y) = (eval(a, inp)?, eval(b, inp)?);
            let both_scalar = x.is_scalar() && y.is_scalar();
            let r: ArrayRef = Arc::new(compare(*op, &x, &y)?);
            Val::of(r, both_scalar)
        }
        NodeK::In(x, items) => {
            let x = eval(x, inp)?;
            let mut any: Option<(BooleanArray, bool)> = None;
            for item in items {
                let v = eval(item, inp)?;
                let scalar = x.is_scalar() && v.is_scalar();
                let eq = compare(Cmp::Eq, &x, &v)?;
                any = Some(match any {
                    None => (eq, scalar),
                    Some((acc, acc_scalar)) if acc_scalar == scalar => {
                        (arrow_arith::boolean::or_kleene(&acc, &eq)?, scalar)
                    }
                    Some((acc, acc_scalar)) => {
                        let widen = |b: BooleanArray, s: bool| -> Result<ArrayRef, Error> {
                            Val::of(Arc::new(b), s).array(n)
                        };
                        let (acc, eq) = (widen(acc, acc_scalar)?, widen(eq, scalar)?);
                        let (acc, eq) = (acc.as_boolean(), eq.as_boolean());
                        (arrow_arith::boolean::or_kleene(acc, eq)?, false)
                    }
                });
            }
            let (r, scalar) = any.ok_or_else(|| expr_error("an empty IN list"))?;
            Val::of(Arc::new(r), scalar)
        }
        NodeK::And(a, b) | NodeK::Or(a, b) => {
            let x = eval(a, inp)?.array(n)?;
            let y = eval(b, inp)?.array(n)?;
            let (x, y) = (
                x.as_any().downcast_ref::<BooleanArray>(),
                y.as_any().downcast_ref::<BooleanArray>(),
            );
            let (Some(x), Some(y)) = (x, y) else {
                return Err(expr_error("AND/OR of non-booleans"));
            };
            let r = if matches!(t.kind, NodeK::And(..)) {
                arrow_arith::boolean::and_kleene(x, y)?
            } else {
                arrow_arith::boolean::or_kleene(x, y)?
            };
            Val::Array(Arc::new(r))
        }
        NodeK::Not(a) => eval(a, inp)?.map(|x| {
            let b = x
                .as_any()
                .downcast_ref::<BooleanArray>()
                .ok_or_else(|| expr_error("NOT of a non-boolean"))?;
            Ok(Arc::new(arrow_arith::boolean::not(b)?) as ArrayRef)
        })?,
        NodeK::IsNull(a, negated) => {
            let negated = *negated;
            eval(a, inp)?.map(|x| {
                let r = if negated {
                    arrow_arith::boolean::is_not_null(x)?
                } else {
                    arrow_arith::boolean::is_null(x)?
                };
                Ok(Arc::new(r) as ArrayRef)
            })?
        }
        NodeK::Case(whens, other) => {
            let (takes, rest) = case_branches(whens, inp)?;
            if let Some(r) = case_of_literals(whens, other.as_deref(), &takes, t.ty)? {
                return Ok(Val::Array(r));
            }
            let mut acc = match other {
                Some(o) => eval_where(o, inp, &rest)?,
                None => null_constant(t.ty),
            };
            for ((_, r), take) in whens.iter().zip(&takes).rev() {
                let r = eval_where(r, inp, take)?;
                let zipped = arrow_select::zip::zip(take, &*r.datum(), &*acc.datum())?;
                acc = Val::Array(zipped);
            }
            Val::Array(acc.array(n)?)
        }
        NodeK::Coalesce(items) => {
            // Each argument only for the rows still null (as DuckDB, so an
            // error in an argument a row does not reach is not its error).
            let mut acc: Option<ArrayRef> = None;
            let mut missing = BooleanArray::new(arrow_buffer::BooleanBuffer::new_set(n), None);
            for x in items {
                let v = eval_where(x, inp, &missing)?.array(n)?;
                let now = match acc {
                    None => v,
                    Some(a) => arrow_select::zip::zip(&missing, &v, &a)?,
                };
                missing = arrow_arith::boolean::is_null(&now)?;
                acc = Some(now);
                if missing.true_count() == 0 {
                    break;
                }
            }
            Val::Array(acc.ok_or_else(|| expr_error("coalesce without arguments"))?)
        }
        NodeK::Extreme(items, greatest) => {
            let mut acc: Option<ArrayRef> = None;
            for x in items {
                let v = eval(x, inp)?.array(n)?;
                acc = Some(match acc {
                    None => v,
                    Some(best) => {
                        // Take v where best is null, or where v is valid and beats best.
                        let beats = if *greatest {
                            arrow_ord::cmp::gt(&v, &best)?
                        } else {
                            arrow_ord::cmp::lt(&v, &best)?
                        };
                        let beats = null_as_false(&beats);
                        let best_null = arrow_arith::boolean::is_null(&best)?;
                        let take = arrow_arith::boolean::or(&beats, &best_null)?;
                        arrow_select::zip::zip(&take, &v, &best)?
                    }
                });
            }
            Val::Array(acc.expect("least/greatest have arguments"))
        }
        NodeK::Concat(parts) | NodeK::ConcatNullsEmpty(parts) => {
            let nulls_empty = matches!(t.kind, NodeK::ConcatNullsEmpty(_));
            concat(parts, nulls_empty, inp)?
        }
        // An integer's text padded by one ASCII byte: written in one pass.
        NodeK::Lpad(x, _, fill) if int_text(x).is_some() && fill.len() == 1 && fill.is_ascii() => {
            concat(std::slice::from_ref(t), false, inp)?
        }
        NodeK::Lpad(s, len, fill) => {
            let v = eval(s, inp)?;
            let scalar = v.is_scalar();
            let strs = Strs::of(&v)?;
            let rows = if scalar { 1 } else { n };
            let fill: Vec<char> = fill.chars().collect();
            let ascii_fill = fill.len() == 1 && fill[0].is_ascii();
            let mut b = StrBuild::new(rows, rows * *len);
            for i in 0..rows {
                let Some(x) = strs.get(i) else {
                    b.null();
                    continue;
                };
                // ASCII values (numbers, codes) are padded by bytes.
                let chars = if x.is_ascii() {
                    x.len()
                } else {
                    x.chars().count()
                };
                if chars >= *len {
                    let cut = x.char_indices().nth(*len).map_or(x.len(), |(at, _)| at);
                    b.push_part(&x[..cut]);
                } else if ascii_fill {
                    b.push_repeated(fill[0] as u8, *len - chars);
                    b.push_part(x);
                } else {
                    let pad: String = fill.iter().cycle().take(*len - chars).collect();
                    b.push_part(&pad);
                    b.push_part(x);
                }
                b.end_value();
            }
            let r = b.finish()?;
            Val::of(r, scalar)
        }
        NodeK::Cast(x) => {
            let v = eval(x, inp)?;
            let from = x.ty;
            v.map(|a| cast_value(a, from, t.ty))?
        }
        NodeK::RoundTens(x, k) => {
            let v = eval(x, inp)?;
            if is_null_constant(&v) {
                return Ok(null_constant(t.ty));
            }
            let scale = match x.ty {
                ETy::Decimal(_, s) => s as u32,
                _ => 0,
            };
            let len = if v.is_scalar() { 1 } else { n };
            let u = Units::of(&v, len)?;
            let (shift, m) = (scale + k, 10i128.pow(*k));
            let fits = match t.ty {
                ETy::Decimal(p, _) => {
                    let max = 10i128.pow(u32::from(p)) - 1;
                    -max..=max
                }
                _ => i128::from(i64::MIN)..=i128::from(i64::MAX),
            };
            let mut out = Vec::with_capacity(len);
            for i in 0..len {
                // Past 38 digits every value of at most 38 digits rounds to 0.
                let q = if shift > u32::from(MAX_PRECISION) {
                    0
                } else {
                    round_down(u.get(i), shift)
                };
                match q.checked_mul(m) {
                    Some(r) if fits.contains(&r) => out.push(r),
                    _ if !u.valid(i) => out.push(0),
                    _ => return Err(expr_error(format!("round overflows {}", t.ty.name()))),
                }
            }
            let nulls = u.nulls.cloned();
            let r: ArrayRef = match t.ty {
                ETy::Decimal(p, s) => Arc::new(
                    Decimal128Array::new(out.into(), nulls).with_precision_and_scale(p, s)?,
                ),
                _ => Arc::new(Int64Array::new(
                    out.into_iter().map(|r| r as i64).collect(),
                    nulls,
                )),
            };
            Val::of(r, v.is_scalar())
        }
        NodeK::Uniform { min, max, salt } => {
            let span = (*max as i128 - *min as i128 + 1) as u128;
            let key = StreamKey::new(inp.key.first(*salt), 0x7e47_a11d);
            let v: Vec<i64> = inp
                .ids
                .iter()
                .map(|&id| {
                    let r = ((u128::from(key.first(id)) * span) >> 64) as i128;
                    (*min as i128 + r) as i64
                })
                .collect();
            let v = Int64Array::from(v);
            Val::Array(Arc::new(v))
        }
    })
}

/// `x + sign * k` of each row, as `O` (days or microseconds): a value past
/// `O`'s range is an error (`what`) unless its row is null (a null row's
/// value can be anything).
fn offsets<O: TryFrom<i128> + Default + Copy>(
    x: &Units<'_>,
    k: &Units<'_>,
    len: usize,
    sign: i128,
    what: &str,
) -> Result<Vec<O>, Error> {
    let past = std::cell::Cell::new(false);
    let out: Vec<O> = units_kernel(x, k, len, |d, k| {
        O::try_from(d + sign * k).unwrap_or_else(|_| {
            past.set(true);
            O::default()
        })
    });
    if past.get()
        && (0..len)
            .any(|i| x.valid(i) && k.valid(i) && O::try_from(x.get(i) + sign * k.get(i)).is_err())
    {
        return Err(expr_error(what));
    }
    Ok(out)
}

/// Whether `v` is the null constant (a strict operation of it is null).
fn is_null_constant(v: &Val) -> bool {
    matches!(v, Val::Scalar(a) if a.is_null(0))
}

/// The null constant of type `ty`.
fn null_constant(ty: ETy) -> Val {
    Val::Scalar(new_null_array(&ty.arrow(), 1))
}

/// `x op y`, as SQL compares: for doubles, `-0.0` equals `0.0` (Arrow's
/// kernels order floats totally, where they differ).
fn compare(op: Cmp, x: &Val, y: &Val) -> Result<BooleanArray, Error> {
    use arrow_ord::cmp;
    let signless = |v: &Val| -> Result<Option<Val>, Error> {
        let a = match v {
            Val::Array(a) | Val::Scalar(a) => a,
        };
        let Some(f) = a.as_any().downcast_ref::<Float64Array>() else {
            return Ok(None);
        };
        let f: Float64Array = f.unary(|x| x + 0.0);
        Ok(Some(Val::of(Arc::new(f), v.is_scalar())))
    };
    let (sx, sy) = (signless(x)?, signless(y)?);
    let (x, y) = (sx.as_ref().unwrap_or(x), sy.as_ref().unwrap_or(y));
    let (xd, yd) = (x.datum(), y.datum());
    Ok(match op {
        Cmp::Eq => cmp::eq(&*xd, &*yd),
        Cmp::Ne => cmp::neq(&*xd, &*yd),
        Cmp::Lt => cmp::lt(&*xd, &*yd),
        Cmp::Le => cmp::lt_eq(&*xd, &*yd),
        Cmp::Gt => cmp::gt(&*xd, &*yd),
        Cmp::Ge => cmp::gt_eq(&*xd, &*yd),
    }?)
}

/// `c` with its nulls as false.
fn null_as_false(c: &BooleanArray) -> BooleanArray {
    match c.nulls() {
        Some(n) if n.null_count() > 0 => BooleanArray::new(c.values() & n.inner(), None),
        _ => BooleanArray::new(c.values().clone(), None),
    }
}

/// [`eval`], but an `int32` sibling as it is (the loops that take it
/// read 32-bit integers without a cast to 64 bits first).
fn eval_int32(t: &TNode, inp: &Inputs<'_>) -> Result<Val, Error> {
    if let (NodeK::Col(i), ETy::Int) = (&t.kind, t.ty)
        && let Some(Some(c)) = inp.columns.get(*i)
        && *c.data_type() == DataType::Int32
    {
        return Ok(Val::Array(c.clone()));
    }
    eval(t, inp)
}

fn strings(a: &ArrayRef) -> Result<&StringArray, Error> {
    a.as_any()
        .downcast_ref::<StringArray>()
        .ok_or_else(|| expr_error("a string operand is not a string"))
}

/// `CAST` semantics: numbers to integers round half away from zero (as
/// DuckDB does); strings to dates parse `YYYY-MM-DD`.
fn cast_value(a: &ArrayRef, from: ETy, to: ETy) -> Result<ArrayRef, Error> {
    let strict = arrow_cast::CastOptions {
        safe: false,
        ..Default::default()
    };
    let dt = to.arrow();
    let r = match (from, to) {
        (ETy::Float, ETy::Int) => {
            let f = arrow_cast::cast(a, &DataType::Float64)?;
            let f = f
                .as_any()
                .downcast_ref::<Float64Array>()
                .ok_or_else(|| expr_error("a double is not a double"))?;
            let rounded: Float64Array = f.unary(f64::round);
            arrow_cast::cast_with_options(&rounded, &dt, &strict)
        }
        (ETy::Decimal(..), ETy::Int) => {
            // Rounded by the cast to scale 0 first.
            let whole =
                arrow_cast::cast_with_options(a, &DataType::Decimal128(MAX_PRECISION, 0), &strict)?;
            arrow_cast::cast_with_options(&whole, &dt, &strict)
        }
        (ETy::Null, _) => Ok(new_null_array(&dt, a.len())),
        (ETy::Int, ETy::Str) => return int_strings(a),
        (ETy::Timestamp, ETy::Str) => return timestamp_strings(a),
        (ETy::Str, ETy::Timestamp) => {
            let s = strings(a)?;
            let mut bad = None;
            let v: TimestampMicrosecondArray = s
                .iter()
                .map(|x| {
                    x.and_then(|x| {
                        let t = parse_timestamp(x);
                        if t.is_none() {
                            bad.get_or_insert_with(|| x.to_string());
                        }
                        t
                    })
                })
                .collect();
            if let Some(x) = bad {
                return Err(expr_error(format!("cannot cast `{x}` to a timestamp")));
            }
            return Ok(Arc::new(v));
        }
        _ => arrow_cast::cast_with_options(a, &dt, &strict),
    };
    r.map_err(|e| {
        expr_error(format!(
            "cannot cast a {} to {}: {e}",
            from.name(),
            to.name()
        ))
    })
}

/// A one-row array of `l` as type `ty`.
fn literal_array(l: &Lit, ty: ETy) -> Result<ArrayRef, Error> {
    Ok(match l {
        Lit::Null => new_null_array(&ty.arrow(), 1),
        Lit::Bool(b) => Arc::new(BooleanArray::from(vec![*b])),
        Lit::Int(v) => Arc::new(Int64Array::from(vec![*v])),
        Lit::Float(v) => Arc::new(Float64Array::from(vec![*v])),
        Lit::Dec(v) => {
            let ETy::Decimal(p, s) = ty else {
                return Err(expr_error("a decimal literal without a decimal type"));
            };
            Arc::new(Decimal128Array::from(vec![*v]).with_precision_and_scale(p, s)?)
        }
        Lit::Date(d) => Arc::new(Date32Array::from(vec![*d])),
        Lit::Ts(t) => Arc::new(TimestampMicrosecondArray::from(vec![*t])),
        Lit::Str(s) => Arc::new(StringArray::from(vec![s.as_str()])),
    })
}

/// Decimal `+`, `-`, `*` on units: integers as units of scale 0, the
/// result at the checked type's scale; overflow of a valid row's value
/// past `i128` is an error (its precision is checked when stored).
#[allow(clippy::too_many_arguments)]
fn decimal_arith(
    op: Arith,
    x: &Val,
    xty: ETy,
    xdigits: i16,
    y: &Val,
    yty: ETy,
    ydigits: i16,
    out: ETy,
    n: usize,
    round: u32,
) -> Result<Val, Error> {
    let ETy::Decimal(p, s) = out else {
        return Err(expr_error("a decimal operation without a decimal type"));
    };
    // The stored type when rounding: `round` fewer digits of scale, one
    // more integer digit for the carry.
    let (p_out, s_out) = if round == 0 {
        (p, s)
    } else {
        let s_out = s - round as i8;
        ((p as i16 - round as i16 + 1).clamp(1, 38) as u8, s_out)
    };
    let scale_of = |t: ETy| match t {
        ETy::Decimal(_, s) => s,
        _ => 0,
    };
    if is_null_constant(x) || is_null_constant(y) {
        return Ok(null_constant(out));
    }
    let both_scalar = x.is_scalar() && y.is_scalar();
    let len = if both_scalar { 1 } else { n };
    let (a, b) = (Units::of(x, len)?, Units::of(y, len)?);
    // Operands of `+` and `-` go to the result's scale first.
    let (ma, mb) = if op == Arith::Mul {
        (1, 1)
    } else {
        (
            10i128.pow((s - scale_of(xty)).max(0) as u32),
            10i128.pow((s - scale_of(yty)).max(0) as u32),
        )
    };
    let nulls = arrow_buffer::NullBuffer::union(a.nulls, b.nulls);
    // Operands within their digits cannot overflow a result of at most
    // 38 digits (below 2^127): no check per row then.
    let (sx, sy) = (i16::from(scale_of(xty)), i16::from(scale_of(yty)));
    let need = if op == Arith::Mul {
        xdigits + ydigits
    } else {
        (xdigits - sx).max(ydigits - sy) + i16::from(s) + 1
    };
    if need <= i16::from(MAX_PRECISION) {
        let add = |u: i128, v: i128| u.wrapping_mul(ma).wrapping_add(v.wrapping_mul(mb));
        let sub = |u: i128, v: i128| u.wrapping_mul(ma).wrapping_sub(v.wrapping_mul(mb));
        let values = match (op, round) {
            (Arith::Mul, 0) => units_kernel(&a, &b, len, |u, v| u.wrapping_mul(v)),
            (Arith::Mul, k) => units_kernel(&a, &b, len, |u, v| round_down(u.wrapping_mul(v), k)),
            (Arith::Add, 0) => units_kernel(&a, &b, len, add),
            (Arith::Add, k) => units_kernel(&a, &b, len, |u, v| round_down(add(u, v), k)),
            (_, 0) => units_kernel(&a, &b, len, sub),
            (_, k) => units_kernel(&a, &b, len, |u, v| round_down(sub(u, v), k)),
        };
        let r: ArrayRef = Arc::new(
            Decimal128Array::new(values.into(), nulls).with_precision_and_scale(p_out, s_out)?,
        );
        return Ok(Val::of(r, both_scalar));
    }
    let mut values = Vec::with_capacity(len);
    for i in 0..len {
        let (u, v) = (a.get(i), b.get(i));
        let r = match op {
            Arith::Mul => u.checked_mul(v),
            Arith::Add => u
                .checked_mul(ma)
                .zip(v.checked_mul(mb))
                .and_then(|(u, v)| u.checked_add(v)),
            _ => u
                .checked_mul(ma)
                .zip(v.checked_mul(mb))
                .and_then(|(u, v)| u.checked_sub(v)),
        };
        match r {
            Some(r) if round == 0 => values.push(r),
            Some(r) => values.push(round_down(r, round)),
            None if !(a.valid(i) && b.valid(i)) => values.push(0),
            None => return Err(expr_error("decimal overflow")),
        }
    }
    let r: ArrayRef = Arc::new(
        Decimal128Array::new(values.into(), nulls).with_precision_and_scale(p_out, s_out)?,
    );
    Ok(Val::of(r, both_scalar))
}

/// `f` of the units of `a` and `b`, row by row: one tight loop for each
/// pair of operand kinds.
#[inline(always)]
fn units_kernel<O>(
    a: &Units<'_>,
    b: &Units<'_>,
    len: usize,
    f: impl Fn(i128, i128) -> O,
) -> Vec<O> {
    use UnitValues::{Dec, Int, Int32};
    match (&a.values, &b.values, a.scalar, b.scalar) {
        (Dec(x), Dec(y), false, false) => x.iter().zip(*y).map(|(&u, &v)| f(u, v)).collect(),
        (Dec(x), Int(y), false, false) => x
            .iter()
            .zip(*y)
            .map(|(&u, &v)| f(u, i128::from(v)))
            .collect(),
        (Int(x), Dec(y), false, false) => x
            .iter()
            .zip(*y)
            .map(|(&u, &v)| f(i128::from(u), v))
            .collect(),
        (Int32(x), Dec(y), false, false) => x
            .iter()
            .zip(*y)
            .map(|(&u, &v)| f(i128::from(u), v))
            .collect(),
        (Dec(x), Int32(y), false, false) => x
            .iter()
            .zip(*y)
            .map(|(&u, &v)| f(u, i128::from(v)))
            .collect(),
        (Int32(x), Int(y), false, false) => x
            .iter()
            .zip(*y)
            .map(|(&u, &v)| f(i128::from(u), i128::from(v)))
            .collect(),
        (Int32(x), Int32(y), false, false) => x
            .iter()
            .zip(*y)
            .map(|(&u, &v)| f(i128::from(u), i128::from(v)))
            .collect(),
        (Int(x), Int(y), false, false) => x
            .iter()
            .zip(*y)
            .map(|(&u, &v)| f(i128::from(u), i128::from(v)))
            .collect(),
        (Int32(x), _, false, true) => {
            let c = b.get(0);
            x.iter().map(|&u| f(i128::from(u), c)).collect()
        }
        (Dec(x), _, false, true) => {
            let c = b.get(0);
            x.iter().map(|&u| f(u, c)).collect()
        }
        (Int(x), _, false, true) => {
            let c = b.get(0);
            x.iter().map(|&u| f(i128::from(u), c)).collect()
        }
        (_, Dec(y), true, false) => {
            let c = a.get(0);
            y.iter().map(|&v| f(c, v)).collect()
        }
        (_, Int(y), true, false) => {
            let c = a.get(0);
            y.iter().map(|&v| f(c, i128::from(v))).collect()
        }
        _ => (0..len).map(|i| f(a.get(i), b.get(i))).collect(),
    }
}

/// Whole units of a decimal, integer or date column (dates as days), or
/// of a constant (`scalar`: one value for every row, never null), by row.
struct Units<'a> {
    values: UnitValues<'a>,
    nulls: Option<&'a arrow_buffer::NullBuffer>,
    scalar: bool,
}

enum UnitValues<'a> {
    Dec(&'a [i128]),
    Int(&'a [i64]),
    /// `int32` and `date32` values.
    Int32(&'a [i32]),
}

impl<'a> Units<'a> {
    /// `v` read for `len` rows (a null constant is the caller's case).
    fn of(v: &'a Val, len: usize) -> Result<Units<'a>, Error> {
        let (a, scalar) = match v {
            Val::Array(a) => (a, false),
            Val::Scalar(a) => (a, true),
        };
        if scalar && a.is_null(0) {
            return Err(expr_error("a null constant read as a number"));
        }
        if !scalar && a.len() != len {
            return Err(expr_error("operands of different lengths"));
        }
        let any = a.as_any();
        let values = if let Some(d) = any.downcast_ref::<Decimal128Array>() {
            UnitValues::Dec(d.values())
        } else if let Some(x) = any.downcast_ref::<Int64Array>() {
            UnitValues::Int(x.values())
        } else if let Some(x) = any.downcast_ref::<arrow_array::Int32Array>() {
            UnitValues::Int32(x.values())
        } else if let Some(x) = any.downcast_ref::<Date32Array>() {
            UnitValues::Int32(x.values())
        } else if let Some(x) = any.downcast_ref::<TimestampMicrosecondArray>() {
            UnitValues::Int(x.values())
        } else {
            return Err(expr_error("a numeric operand is not a number"));
        };
        Ok(Units {
            values,
            nulls: if scalar { None } else { a.nulls() },
            scalar,
        })
    }

    #[inline(always)]
    fn get(&self, i: usize) -> i128 {
        let i = if self.scalar { 0 } else { i };
        match self.values {
            UnitValues::Dec(v) => v[i],
            UnitValues::Int(v) => i128::from(v[i]),
            UnitValues::Int32(v) => i128::from(v[i]),
        }
    }

    fn valid(&self, i: usize) -> bool {
        self.nulls.is_none_or(|n| n.is_valid(i))
    }
}

/// `units` divided by `10^k`, rounded half away from zero.
#[inline(always)]
fn round_down(units: i128, k: u32) -> i128 {
    #[inline(always)]
    fn small<const D: i64>(x: i64) -> i64 {
        let (q, r) = (x / D, x % D);
        q + (2 * r.abs() >= D) as i64 * x.signum()
    }
    if let Ok(x) = i64::try_from(units)
        && x.unsigned_abs() < (1 << 62)
    {
        // Constant divisors: the compiler multiplies instead of dividing.
        return i128::from(match k {
            1 => small::<10>(x),
            2 => small::<100>(x),
            3 => small::<1_000>(x),
            4 => small::<10_000>(x),
            5 => small::<100_000>(x),
            6 => small::<1_000_000>(x),
            _ => return round_wide(units, k),
        });
    }
    round_wide(units, k)
}

fn round_wide(units: i128, k: u32) -> i128 {
    let d = 10u128.pow(k);
    let (q, r) = (units / d as i128, units.unsigned_abs() % d);
    // `2r >= d` without doubling r, which would overflow at k = 38.
    q + (r >= d - r) as i128 * units.signum()
}

/// A decimal column at scale `s` as `Decimal128(p, to)`: rounded half
/// away from zero, a valid value beyond `p` digits an error.
fn rescale_decimal(d: &Decimal128Array, s: i8, p: u8, to: i8) -> Result<ArrayRef, Error> {
    let max = 10i128.pow(u32::from(p)) - 1;
    let nulls = d.nulls();
    let src = d.values();
    if to == s {
        // Same scale: the values stay where they are, once checked.
        if let Some(i) = src.iter().enumerate().position(|(i, v)| {
            v.unsigned_abs() > max as u128 && !nulls.is_some_and(|nb| nb.is_null(i))
        }) {
            return Err(expr_error(format!(
                "a value does not fit decimal({p}, {to}): {}",
                <arrow_array::types::Decimal128Type as arrow_array::types::DecimalType>::format_decimal(src[i], 38, s)
            )));
        }
        return Ok(Arc::new(d.clone().with_precision_and_scale(p, to)?));
    }
    // One loop per direction, the factor or divisor fixed outside it.
    let values: Vec<i128> = if to > s {
        let m = 10i128.pow((to - s) as u32);
        src.iter().map(|&u| u.saturating_mul(m)).collect()
    } else {
        let k = (s - to) as u32;
        match k {
            1 => src.iter().map(|&u| round_down(u, 1)).collect(),
            2 => src.iter().map(|&u| round_down(u, 2)).collect(),
            _ => src.iter().map(|&u| round_down(u, k)).collect(),
        }
    };
    if let Some(i) = values
        .iter()
        .enumerate()
        .position(|(i, v)| v.unsigned_abs() > max as u128 && !nulls.is_some_and(|nb| nb.is_null(i)))
    {
        return Err(expr_error(format!(
            "a value does not fit decimal({p}, {to}): {}",
            <arrow_array::types::Decimal128Type as arrow_array::types::DecimalType>::format_decimal(
                src[i], 38, s
            )
        )));
    }
    Ok(Arc::new(
        Decimal128Array::new(values.into(), nulls.cloned()).with_precision_and_scale(p, to)?,
    ))
}

/// Strings of a column or a constant, by row.
struct Strs<'a> {
    a: &'a StringArray,
    scalar: bool,
    /// Whether any value is null (else no bitmap is read per value).
    nulls: bool,
}

impl<'a> Strs<'a> {
    fn of(v: &'a Val) -> Result<Strs<'a>, Error> {
        let (a, scalar) = match v {
            Val::Array(a) => (a, false),
            Val::Scalar(a) => (a, true),
        };
        let a = strings(a)?;
        Ok(Strs {
            a,
            scalar,
            nulls: a.null_count() > 0,
        })
    }

    #[inline(always)]
    fn get(&self, i: usize) -> Option<&'a str> {
        let i = if self.scalar { 0 } else { i };
        if self.nulls && self.a.is_null(i) {
            return None;
        }
        Some(self.a.value(i))
    }

    fn bytes_hint(&self, rows: usize) -> usize {
        if self.scalar {
            self.a.value_data().len() * rows
        } else {
            self.a.value_data().len()
        }
    }
}

/// A string column built in one buffer.
struct StrBuild {
    bytes: Vec<u8>,
    offsets: Vec<i32>,
    /// Validity by row, kept from the first null on.
    valid: Option<Vec<bool>>,
}

impl StrBuild {
    /// A builder for `rows` values of about `bytes` bytes in all (a hint,
    /// capped at what one column can hold).
    fn new(rows: usize, bytes: usize) -> StrBuild {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        StrBuild {
            bytes: Vec::with_capacity(bytes.min(i32::MAX as usize)),
            offsets,
            valid: None,
        }
    }

    #[inline(always)]
    fn push_part(&mut self, s: &str) {
        self.bytes.extend_from_slice(s.as_bytes());
    }

    fn push_repeated(&mut self, b: u8, n: usize) {
        self.bytes.resize(self.bytes.len() + n, b);
    }

    #[inline(always)]
    fn end_value(&mut self) {
        self.offsets.push(self.bytes.len() as i32);
        if let Some(v) = &mut self.valid {
            v.push(true);
        }
    }

    fn null(&mut self) {
        let before = self.offsets.len() - 1;
        self.offsets.push(self.bytes.len() as i32);
        self.valid
            .get_or_insert_with(|| vec![true; before])
            .push(false);
    }

    /// The column; [`Error::BatchTooLarge`] past 2 GiB of bytes.
    fn finish(self) -> Result<ArrayRef, Error> {
        // Offsets were written as `as i32`; they are right when the last
        // (the largest) fits.
        if i32::try_from(self.bytes.len()).is_err() {
            return Err(Error::BatchTooLarge);
        }
        let nulls = self.valid.map(arrow_buffer::NullBuffer::from);
        let offsets = arrow_buffer::OffsetBuffer::new(self.offsets.into());
        // SAFETY: the offsets start at 0 and never decrease (each is the
        // buffer's length after a value, and the last fits `i32`, checked
        // above), and every value is the bytes of whole `&str`s, so each
        // slice is valid UTF-8.
        Ok(Arc::new(unsafe {
            StringArray::new_unchecked(offsets, self.bytes.into(), nulls)
        }))
    }
}

/// Timestamps as DuckDB writes them: `1995-06-17 08:30:00`, with the
/// fraction of a second when there is one (`.5`, `.000123`).
fn timestamp_strings(a: &ArrayRef) -> Result<ArrayRef, Error> {
    let v = a
        .as_any()
        .downcast_ref::<TimestampMicrosecondArray>()
        .ok_or_else(|| expr_error("a timestamp is not a timestamp"))?;
    let mut b = StrBuild::new(v.len(), v.len() * 26);
    for i in 0..v.len() {
        let t = match v.is_valid(i) {
            true => chrono::DateTime::from_timestamp_micros(v.value(i)),
            false => None,
        };
        let Some(t) = t else {
            b.null();
            continue;
        };
        let text = t.naive_utc().format("%Y-%m-%d %H:%M:%S").to_string();
        b.push_part(&text);
        let us = v.value(i).rem_euclid(1_000_000);
        if us != 0 {
            let frac = format!(".{us:06}");
            b.push_part(frac.trim_end_matches('0'));
        }
        b.end_value();
    }
    b.finish()
}

/// The integer node whose text `t` is (`CAST(x AS VARCHAR)` of an
/// integer), if it is one.
fn int_text(t: &TNode) -> Option<&TNode> {
    match &t.kind {
        NodeK::Cast(x) if x.ty == ETy::Int && t.ty == ETy::Str => Some(x),
        _ => None,
    }
}

/// One part of a string built in one pass.
enum Part<'a> {
    Str(Strs<'a>),
    /// An integer's digits, left-padded with a byte to a length (and cut
    /// to it, as `lpad`) when `pad` says so.
    Int {
        v: Units<'a>,
        pad: Option<(usize, u8)>,
    },
}

/// `parts` joined, a row at a time into one buffer (`||`: null when a part
/// is; `concat`, `nulls_empty`: nulls as empty strings). An integer's text,
/// padded or not, is written straight from the integers: no column of
/// text is made for it.
fn concat(parts: &[TNode], nulls_empty: bool, inp: &Inputs<'_>) -> Result<Val, Error> {
    let n = inp.ids.len();
    // Each part's value, and its padding when it is the text of an integer.
    let mut vals = Vec::with_capacity(parts.len());
    for p in parts {
        let padded = match &p.kind {
            NodeK::Lpad(x, len, fill) if fill.len() == 1 && fill.is_ascii() => {
                int_text(x).map(|i| (i, Some((*len, fill.as_bytes()[0]))))
            }
            _ => None,
        };
        match padded.or_else(|| int_text(p).map(|i| (i, None))) {
            Some((i, pad)) => vals.push((eval_int32(i, inp)?, Some(pad))),
            None => vals.push((eval(p, inp)?, None)),
        }
    }
    let all_scalar = vals.iter().all(|(v, _)| v.is_scalar());
    let len = if all_scalar { 1 } else { n };
    let mut hint = 0;
    let mut readers = Vec::with_capacity(vals.len());
    for (v, pad) in &vals {
        if let Some(pad) = pad {
            if is_null_constant(v) {
                readers.push(None);
                continue;
            }
            hint += len * pad.map_or(4, |(l, _)| l);
            readers.push(Some(Part::Int {
                v: Units::of(v, len)?,
                pad: *pad,
            }));
        } else {
            let s = Strs::of(v)?;
            hint += s.bytes_hint(len);
            readers.push(Some(Part::Str(s)));
        }
    }
    let mut b = StrBuild::new(len, hint);
    'rows: for i in 0..len {
        let start = b.bytes.len();
        for r in &readers {
            match r {
                Some(Part::Str(s)) => match s.get(i) {
                    Some(v) => b.push_part(v),
                    None if nulls_empty => {}
                    None => {
                        b.bytes.truncate(start);
                        b.null();
                        continue 'rows;
                    }
                },
                Some(Part::Int { v, pad }) => {
                    if !v.valid(i) {
                        if nulls_empty {
                            continue;
                        }
                        b.bytes.truncate(start);
                        b.null();
                        continue 'rows;
                    }
                    let mut digits = [0u8; 20];
                    let text = decimal_text(v.get(i) as i64, &mut digits);
                    match pad {
                        None => b.bytes.extend_from_slice(text),
                        Some((len, _)) if text.len() >= *len => {
                            b.bytes.extend_from_slice(&text[..*len])
                        }
                        Some((len, fill)) => {
                            b.push_repeated(*fill, len - text.len());
                            b.bytes.extend_from_slice(text);
                        }
                    }
                }
                // A null constant.
                None if nulls_empty => {}
                None => {
                    b.bytes.truncate(start);
                    b.null();
                    continue 'rows;
                }
            }
        }
        b.end_value();
    }
    Ok(Val::of(b.finish()?, all_scalar))
}

/// `x`'s decimal text, written at the end of `buf` (64-bit division by 10
/// is a multiply).
#[inline(always)]
fn decimal_text(x: i64, buf: &mut [u8; 20]) -> &[u8] {
    let mut at = buf.len();
    let mut m = x.unsigned_abs();
    loop {
        at -= 1;
        buf[at] = b'0' + (m % 10) as u8;
        m /= 10;
        if m == 0 {
            break;
        }
    }
    if x < 0 {
        at -= 1;
        buf[at] = b'-';
    }
    &buf[at..]
}

/// Integers as their decimal text (as `CAST(x AS VARCHAR)`).
fn int_strings(a: &ArrayRef) -> Result<ArrayRef, Error> {
    let v = arrow_cast::cast(a, &DataType::Int64)?;
    let v = v
        .as_any()
        .downcast_ref::<Int64Array>()
        .ok_or_else(|| expr_error("an integer is not an integer"))?;
    let mut b = StrBuild::new(v.len(), v.len() * 4);
    for i in 0..v.len() {
        if v.is_null(i) {
            b.null();
            continue;
        }
        let mut digits = [0u8; 20];
        b.bytes
            .extend_from_slice(decimal_text(v.value(i), &mut digits));
        b.end_value();
    }
    b.finish()
}

/// The rows each `WHEN` of a `CASE` takes (those whose condition is the
/// first true one), and the rows none takes. A condition is evaluated for
/// the rows no earlier one took.
fn case_branches(
    whens: &[(TNode, TNode)],
    inp: &Inputs<'_>,
) -> Result<(Vec<BooleanArray>, BooleanArray), Error> {
    let n = inp.ids.len();
    let mut rest = BooleanArray::new(arrow_buffer::BooleanBuffer::new_set(n), None);
    let mut takes = Vec::with_capacity(whens.len());
    for (c, _) in whens {
        let c = eval_where(c, inp, &rest)?.array(n)?;
        let c = c
            .as_boolean_opt()
            .ok_or_else(|| expr_error("a WHEN condition is not a boolean"))?;
        let c = null_as_false(c);
        takes.push(arrow_arith::boolean::and(&c, &rest)?);
        rest = arrow_arith::boolean::and_not(&rest, &c)?;
    }
    Ok((takes, rest))
}

/// `t` for the rows of `mask` (a mask without nulls); other rows get any
/// value. `t` is evaluated for all rows, and only when that fails, again
/// for the masked rows alone: an error in a row the mask leaves out (a
/// `CASE` branch the row does not take) is not the expression's.
fn eval_where(t: &TNode, inp: &Inputs<'_>, mask: &BooleanArray) -> Result<Val, Error> {
    let err = match eval(t, inp) {
        Ok(v) => return Ok(v),
        Err(e) => e,
    };
    let rows = mask.true_count();
    if rows == mask.len() {
        return Err(err);
    }
    if rows == 0 {
        return Ok(null_constant(t.ty));
    }
    let filter = |c: &ArrayRef| arrow_select::filter::filter(c, mask);
    let columns = inp
        .columns
        .iter()
        .map(|c| c.as_ref().map(filter).transpose())
        .collect::<Result<Vec<_>, _>>()?;
    let ids: Vec<u64> = mask.values().set_indices().map(|i| inp.ids[i]).collect();
    let some = Inputs {
        columns: &columns,
        ids: &ids,
        key: inp.key,
    };
    Ok(match eval(t, &some)? {
        Val::Scalar(s) => Val::Scalar(s),
        Val::Array(a) => {
            // Back to the batch's rows: a masked row takes the next value.
            let mut next = 0u32;
            let at: arrow_array::UInt32Array = (0..mask.len())
                .map(|i| {
                    mask.value(i).then(|| {
                        next += 1;
                        next - 1
                    })
                })
                .collect();
            Val::Array(arrow_select::take::take(&a, &at, None)?)
        }
    })
}

/// A `CASE` whose results are all string literals (or null): each row's
/// bytes in one pass, from the rows each branch `takes` (as
/// [`case_branches`]). `None` for other cases.
fn case_of_literals(
    whens: &[(TNode, TNode)],
    other: Option<&TNode>,
    takes: &[BooleanArray],
    ty: ETy,
) -> Result<Option<ArrayRef>, Error> {
    let lit = |t: &TNode| match &t.kind {
        NodeK::Lit(Lit::Str(s)) => Some(Some(s.clone())),
        NodeK::Lit(Lit::Null) => Some(None),
        NodeK::Cast(x) if matches!(x.kind, NodeK::Lit(Lit::Null)) => Some(None),
        _ => None,
    };
    if ty != ETy::Str || whens.len() >= 255 {
        return Ok(None);
    }
    let mut results = Vec::new();
    for (_, r) in whens {
        match lit(r) {
            Some(v) => results.push(v),
            None => return Ok(None),
        }
    }
    let fallback = match other {
        Some(o) => match lit(o) {
            Some(v) => v,
            None => return Ok(None),
        },
        None => None,
    };
    results.push(fallback);
    let n = takes.first().map_or(0, BooleanArray::len);
    // Each row's branch (the last: none took it).
    let mut branch = vec![whens.len() as u8; n];
    for (k, take) in takes.iter().enumerate() {
        for i in take.values().set_indices() {
            branch[i] = k as u8;
        }
    }
    let longest = results.iter().flatten().map(String::len).max().unwrap_or(0);
    let mut b = StrBuild::new(n, n * longest);
    for &k in &branch {
        match &results[k as usize] {
            Some(s) => {
                b.push_part(s);
                b.end_value();
            }
            None => b.null(),
        }
    }
    Ok(Some(b.finish()?))
}
