//! The checker: SQL text parsed with sqlparser (DuckDB's dialect) and
//! typed against the siblings it reads, into the tree the evaluator runs.

use arrow_schema::DataType;
use sqlparser::{
    ast::{self, BinaryOperator as B, Spanned, UnaryOperator as U},
    dialect::DuckDbDialect,
    parser::Parser,
};

use super::MAX_PRECISION;
use crate::dates::{parse_date, parse_timestamp};
use crate::model::expression::{Arith, Cmp, ETy, Lit, NodeK, TNode};

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

/// The type of a qualified name `q.x` (called with `q` and `x`), or why
/// it cannot be read.
pub(crate) type ReadQualified<'a> = dyn Fn(&str, &str) -> Result<DataType, String> + 'a;

/// What a checked expression reads: its tree, the sibling names it reads
/// and the qualified names (`parent.x`), whose columns follow the
/// siblings' in the tree (the `k`-th is column `siblings.len() + k`).
pub(crate) type Checked = (TNode, Vec<String>, Vec<(String, String)>);

/// Parses `source` and checks it against `siblings` (name and Arrow type
/// of each): names, types, decimal precision. `own` is the field the
/// expression computes, if it is one of `siblings` (not listed among the
/// names an unknown name could have been). `qualified(q, x)` gives the
/// type of `q.x`, or why it cannot be read.
pub(crate) fn check(
    source: &str,
    siblings: &[(&str, &DataType)],
    own: Option<&str>,
    qualified: &ReadQualified<'_>,
) -> Result<Checked, ExprError> {
    let (tree, c) = run(source, siblings, own, Some(qualified))?;
    Ok((tree?, c.inputs, c.reads))
}

/// As [`check`] before the other tables of a dataset are known: `None`
/// when the expression reads a qualified name (`parent.x`), whose check
/// waits until they are.
pub(crate) fn check_unless_qualified(
    source: &str,
    siblings: &[(&str, &DataType)],
    own: Option<&str>,
) -> Result<Option<Checked>, ExprError> {
    let (tree, c) = run(source, siblings, own, None)?;
    if c.waits {
        return Ok(None);
    }
    Ok(Some((tree?, c.inputs, c.reads)))
}

/// Parses `source` and checks it: the tree (or the first mistake) and the
/// checker, which knows what the expression read.
fn run<'a>(
    source: &str,
    siblings: &'a [(&'a str, &'a DataType)],
    own: Option<&'a str>,
    qualified: Option<&'a ReadQualified<'a>>,
) -> Result<(R<TNode>, Checker<'a>), ExprError> {
    let ast = parse_sql(source)?;
    Ok(run_parsed(&ast, siblings, own, qualified))
}

/// Checks a parsed expression against `siblings` alone (a qualified
/// name is an error): its tree and the sibling names it reads.
pub(crate) fn check_parsed(
    ast: &ast::Expr,
    siblings: &[(&str, &DataType)],
) -> Result<(TNode, Vec<String>), ExprError> {
    let dotted = |q: &str, x: &str| -> Result<DataType, String> {
        Err(format!(
            "`{q}.{x}` is not a name here; a name with a dot is written in double quotes: \"{q}.{x}\""
        ))
    };
    let (tree, c) = run_parsed(ast, siblings, None, Some(&dotted));
    Ok((tree?, c.inputs))
}

fn run_parsed<'a>(
    ast: &ast::Expr,
    siblings: &'a [(&'a str, &'a DataType)],
    own: Option<&'a str>,
    qualified: Option<&'a ReadQualified<'a>>,
) -> (R<TNode>, Checker<'a>) {
    let mut c = Checker {
        siblings,
        own,
        qualified,
        inputs: Vec::new(),
        reads: Vec::new(),
        salts: 0,
        depth: 0,
        waits: false,
    };
    let tree = c.node(ast);
    (tree, c)
}

/// Parses `source` as one SQL expression in DuckDB's dialect; an error
/// names the column (1-based) where the parser stopped.
pub(crate) fn parse_sql(source: &str) -> Result<ast::Expr, ExprError> {
    Parser::new(&DuckDbDialect {})
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
        })
}

struct Checker<'a> {
    siblings: &'a [(&'a str, &'a DataType)],
    /// The field the expression computes, when it is a sibling.
    own: Option<&'a str>,
    /// The type of `q.x`, or why it cannot be read; `None` before the
    /// other tables are known.
    qualified: Option<&'a ReadQualified<'a>>,
    inputs: Vec<String>,
    /// The qualified names read: (qualifier, field), in first-use order.
    reads: Vec<(String, String)>,
    salts: u64,
    /// How many nodes deep the node being checked is.
    depth: usize,
    /// Whether the check stopped at a qualified name it cannot read yet
    /// (`qualified` is `None`).
    waits: bool,
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

/// The type `tys` unify to, or a type mismatch at `at` that lists them
/// after `what` ("the CASE results are").
fn common_type(at: &impl Spanned, what: impl std::fmt::Display, tys: &[ETy]) -> R<ETy> {
    let Some(ty) = unify(tys) else {
        return fail(
            at,
            format!(
                "type mismatch: {what} {}",
                tys.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ")
            ),
        );
    };
    Ok(ty)
}

/// The type `a` and `b` are compared as, or a type mismatch at `at`.
fn comparable(at: &impl Spanned, a: ETy, b: ETy) -> R<ETy> {
    let Some(ty) = unify(&[a, b]) else {
        return fail(
            at,
            format!(
                "type mismatch: cannot compare {} with {}",
                a.with_article(),
                b.with_article()
            ),
        );
    };
    Ok(ty)
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
                    comparable(item, x.ty, v.ty)?;
                    items.push(v);
                }
                let mut tys = vec![x.ty];
                tys.extend(items.iter().map(|v| v.ty));
                let ty = common_type(e, "the IN list mixes", &tys)?;
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
                let ty = common_type(e, "the CASE results are", &tys)?;
                let whens = whens.into_iter().map(|(c, r)| (c, cast(r, ty))).collect();
                Ok(node(
                    ty,
                    NodeK::Case(whens, other.map(|o| Box::new(cast(o, ty)))),
                ))
            }
            E::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => {
                let s = self.node(expr)?;
                if !matches!(s.ty, ETy::Str | ETy::Null) {
                    return fail(
                        &**expr,
                        format!(
                            "type mismatch: substring of {}, not a string",
                            s.ty.with_article()
                        ),
                    );
                }
                let int = |x: &ast::Expr, this: &mut Self| -> R<TNode> {
                    let n = this.node(x)?;
                    if !matches!(n.ty, ETy::Int | ETy::Null) {
                        return fail(
                            x,
                            format!(
                                "type mismatch: substring takes an integer here, not {}",
                                n.ty.with_article()
                            ),
                        );
                    }
                    Ok(cast(n, ETy::Int))
                };
                let Some(from) = substring_from else {
                    return fail(e, "substring(string, start[, length]) needs a start");
                };
                let start = int(from, self)?;
                let len = substring_for.as_ref().map(|l| int(l, self)).transpose()?;
                Ok(node(
                    ETy::Str,
                    NodeK::Substr(
                        Box::new(cast(s, ETy::Str)),
                        Box::new(start),
                        len.map(Box::new),
                    ),
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
            E::CompoundFieldAccess { root, access_chain } => self.list_item(e, root, access_chain),
            _ => fail(e, format!("`{e}` is not supported in a spec expression")),
        }
    }

    /// `[a, b, c][i]`: item `i` of a list literal, from 1 (from -1 at the
    /// end), null outside it, as DuckDB's; a simple `CASE` of `i` (one
    /// draw of `i` per row, a table lookup for literal items).
    fn list_item(
        &mut self,
        e: &ast::Expr,
        root: &ast::Expr,
        chain: &[ast::AccessExpr],
    ) -> R<TNode> {
        let items = match root {
            ast::Expr::Array(a) => &a.elem,
            _ => {
                return fail(
                    e,
                    format!("`{e}`: indexing reads an item of a list literal (`['a', 'b'][i]`)"),
                );
            }
        };
        let [ast::AccessExpr::Subscript(ast::Subscript::Index { index })] = chain else {
            return fail(
                e,
                format!(
                    "`{e}`: a list literal takes one index (`['a', 'b'][i]`), not slices or fields"
                ),
            );
        };
        if items.is_empty() {
            return fail(root, "an indexed list needs at least one item");
        }
        let i = self.node(index)?;
        if !matches!(i.ty, ETy::Int | ETy::Null) {
            return fail(
                index,
                format!(
                    "type mismatch: a list index is an integer, not {}",
                    i.ty.with_article()
                ),
            );
        }
        let i = cast(i, ETy::Int);
        let values = items.iter().map(|x| self.node(x)).collect::<R<Vec<_>>>()?;
        let tys: Vec<ETy> = values.iter().map(|v| v.ty).collect();
        let ty = common_type(root, "the list's items are", &tys)?;
        // Item k is both index k + 1 and index k - n.
        let n = values.len() as i64;
        let whens = (1..=n)
            .zip(&values)
            .chain((-n..0).zip(&values))
            .map(|(at, v)| {
                let test = node(
                    ETy::Bool,
                    NodeK::Cmp(
                        Cmp::Eq,
                        Box::new(i.clone()),
                        Box::new(node(ETy::Int, NodeK::Lit(Lit::Int(at)))),
                    ),
                );
                (test, cast(v.clone(), ty))
            })
            .collect();
        Ok(node(ty, NodeK::Case(whens, None)))
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
                        .filter(|n| Some(*n) != self.own)
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
        let Some(qualified) = self.qualified else {
            self.waits = true;
            return fail_at(column, "a qualified name is read once the tables are known");
        };
        let dt = qualified(&q.value, &x.value).map_err(|m| ExprError {
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
        let ty = comparable(at, a.ty, b.ty)?;
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
                let (lo, hi) = (self.node(args[0])?, self.node(args[1])?);
                self.salts += 1;
                let salt = self.salts;
                if let (NodeK::Lit(Lit::Int(min)), NodeK::Lit(Lit::Int(max))) = (&lo.kind, &hi.kind)
                {
                    let (min, max) = (*min, *max);
                    if min > max {
                        return fail(e, format!("uniform needs min <= max, not {min} and {max}"));
                    }
                    return Ok(node(ETy::Int, NodeK::Uniform { min, max, salt }));
                }
                // Bounds computed per row: integers.
                for (x, arg) in [(&lo, args[0]), (&hi, args[1])] {
                    if !matches!(x.ty, ETy::Int | ETy::Null) {
                        return fail(
                            arg,
                            format!(
                                "type mismatch: uniform's bounds are integers, not {}",
                                x.ty.with_article()
                            ),
                        );
                    }
                }
                Ok(node(
                    ETy::Int,
                    NodeK::UniformOf(
                        Box::new(cast(lo, ETy::Int)),
                        Box::new(cast(hi, ETy::Int)),
                        salt,
                    ),
                ))
            }
            "scale" => {
                if !args.is_empty() {
                    return fail(e, "scale() takes no arguments");
                }
                Ok(node(ETy::Float, NodeK::Scale))
            }
            "rows" => {
                let table = match args.as_slice() {
                    [t] => match self.node(t)?.kind {
                        NodeK::Lit(Lit::Str(name)) => name,
                        _ => return fail(*t, "rows('table') takes a table's name as a string"),
                    },
                    _ => return fail(e, "rows('table') takes one table's name"),
                };
                Ok(node(ETy::Int, NodeK::Rows(table)))
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
                let ty = common_type(e, format!("the arguments of `{name}` are"), &tys)?;
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
                    "unknown function `{name}`; spec expressions have coalesce, least, greatest, concat, lpad, substring (substr), round, uniform, scale, rows"
                ),
            ),
        }
    }
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
