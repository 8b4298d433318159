//! The expression AST: a checked expression ([`Expression`]) and its
//! typed tree, as the checker in `crate::expr` builds it and its
//! evaluator reads it.

use arrow_schema::{DataType, TimeUnit};

/// A parsed and checked expression: its text and its typed tree, whose
/// column numbers index the siblings it was checked against.
#[derive(Debug, Clone, PartialEq)]
pub struct Expression {
    /// The SQL as written.
    pub source: String,
    /// The sibling names it reads, each once, in first-use order.
    pub inputs: Vec<String>,
    /// The fields of other rows it reads (`parent.x`, `ps.x`), each
    /// once, in first-use order: read as references, not output.
    pub reads: Vec<QualifiedField>,
    pub(crate) tree: Option<TNode>,
}

/// A number a spec computes once per run: an SQL expression of literals,
/// `scale()` and `rows('t')` written where a bound, start, step,
/// constant, count or row count is expected (`max = "1000 * scale()"`).
#[derive(Debug, Clone, PartialEq)]
pub struct RunValue {
    /// The SQL as written.
    pub source: String,
    /// The spec line it is on.
    pub line: usize,
    /// The key it is the value of (`max`, `rows`).
    pub key: String,
    pub(crate) tree: TNode,
}

/// A field of another row that an expression reads by a qualified name:
/// `parent.o_orderdate` (the row's parent row) or `ps.ps_supplycost` (the
/// row a sibling reference with `draw = "ps"` drew).
#[derive(Debug, Clone, PartialEq)]
pub struct QualifiedField {
    /// The name as written, `qualifier.field`.
    pub name: String,
    /// Its type (the other table's field's).
    pub data_type: DataType,
    /// How its value is read: a reference to the same row.
    pub reference: super::Reference,
}

impl Expression {
    /// An expression not yet checked against its siblings.
    pub(crate) fn pending(source: String) -> Expression {
        Expression {
            source,
            inputs: Vec::new(),
            reads: Vec::new(),
            tree: None,
        }
    }
}

/// The type of a value inside an expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ETy {
    Null,
    Bool,
    Int,
    Float,
    Decimal(u8, i8),
    Date,
    /// Microseconds since 1970-01-01 00:00:00 (a field's time zone, if
    /// any, stays the field's).
    Timestamp,
    /// A span of microseconds (`INTERVAL 3 HOUR`), added to timestamps.
    Interval,
    Str,
}

impl ETy {
    pub(crate) fn name(self) -> String {
        match self {
            ETy::Null => "null".into(),
            ETy::Bool => "boolean".into(),
            ETy::Int => "integer".into(),
            ETy::Float => "double".into(),
            ETy::Decimal(p, s) => format!("decimal({p}, {s})"),
            ETy::Date => "date".into(),
            ETy::Timestamp => "timestamp".into(),
            ETy::Interval => "interval".into(),
            ETy::Str => "string".into(),
        }
    }

    pub(crate) fn with_article(self) -> String {
        let n = self.name();
        if matches!(self, ETy::Int | ETy::Interval) {
            format!("an {n}")
        } else {
            format!("a {n}")
        }
    }

    pub(crate) fn arrow(self) -> DataType {
        match self {
            ETy::Null => DataType::Null,
            ETy::Bool => DataType::Boolean,
            ETy::Int => DataType::Int64,
            ETy::Float => DataType::Float64,
            ETy::Decimal(p, s) => DataType::Decimal128(p, s),
            ETy::Date => DataType::Date32,
            ETy::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, None),
            ETy::Interval => DataType::Int64,
            ETy::Str => DataType::Utf8,
        }
    }

    pub(crate) fn numeric(self) -> bool {
        matches!(self, ETy::Int | ETy::Float | ETy::Decimal(..))
    }

    /// Whether `-x` is defined.
    pub(crate) fn negatable(self) -> bool {
        self.numeric() || self == ETy::Interval
    }

    /// The expression type a column of Arrow type `dt` is read as.
    pub(crate) fn of(dt: &DataType) -> Option<ETy> {
        Some(match dt {
            DataType::Boolean => ETy::Bool,
            DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32 => ETy::Int,
            DataType::Float32 | DataType::Float64 => ETy::Float,
            DataType::Decimal128(p, s) => ETy::Decimal(*p, *s),
            DataType::Date32 => ETy::Date,
            DataType::Timestamp(..) => ETy::Timestamp,
            DataType::Utf8 | DataType::LargeUtf8 => ETy::Str,
            DataType::Dictionary(_, v) if matches!(**v, DataType::Utf8) => ETy::Str,
            _ => return None,
        })
    }
}

impl TNode {
    /// The tree with every column number `i` replaced by `map(i)`.
    pub(crate) fn with_columns(mut self, map: &dyn Fn(usize) -> usize) -> TNode {
        self.visit_mut(&mut |t| {
            if let NodeK::Col(i) = &mut t.kind {
                *i = map(*i);
            }
        });
        self
    }

    /// The tree with `scale()` and `rows('t')` replaced by their values
    /// for one run: `scale`, and `rows(t)` (`None`: no such table, or one
    /// without rows of its own, an error naming it).
    pub(crate) fn with_run(
        mut self,
        scale: f64,
        rows: &dyn Fn(&str) -> Option<u64>,
    ) -> Result<TNode, String> {
        let mut missing = None;
        self.visit_mut(&mut |t| match &t.kind {
            NodeK::Scale => t.kind = NodeK::Lit(Lit::Float(scale)),
            NodeK::Rows(name) => match rows(name) {
                Some(n) => t.kind = NodeK::Lit(Lit::Int(i64::try_from(n).unwrap_or(i64::MAX))),
                None => missing = Some(name.clone()),
            },
            _ => {}
        });
        match missing {
            Some(name) => Err(format!(
                "rows('{name}'): no table of this dataset with rows of its own is named so"
            )),
            None => Ok(self),
        }
    }

    /// Calls `f` on every node of the tree, children first.
    pub(crate) fn visit_mut(&mut self, f: &mut dyn FnMut(&mut TNode)) {
        match &mut self.kind {
            NodeK::Col(_)
            | NodeK::Lit(_)
            | NodeK::Uniform { .. }
            | NodeK::Scale
            | NodeK::Rows(_) => {}
            NodeK::Neg(x)
            | NodeK::Not(x)
            | NodeK::IsNull(x, _)
            | NodeK::Cast(x)
            | NodeK::RoundTens(x, _)
            | NodeK::Lpad(x, ..) => x.visit_mut(f),
            NodeK::Arith(_, a, b)
            | NodeK::DateAdd(a, b, _)
            | NodeK::DateDiff(a, b)
            | NodeK::Cmp(_, a, b)
            | NodeK::And(a, b)
            | NodeK::Or(a, b)
            | NodeK::UniformOf(a, b, _) => {
                a.visit_mut(f);
                b.visit_mut(f);
            }
            NodeK::Substr(s, start, len) => {
                s.visit_mut(f);
                start.visit_mut(f);
                if let Some(l) = len {
                    l.visit_mut(f);
                }
            }
            NodeK::Case(whens, other) => {
                for (c, r) in whens {
                    c.visit_mut(f);
                    r.visit_mut(f);
                }
                if let Some(o) = other {
                    o.visit_mut(f);
                }
            }
            NodeK::In(x, xs) => {
                x.visit_mut(f);
                for x in xs {
                    x.visit_mut(f);
                }
            }
            NodeK::Coalesce(xs)
            | NodeK::Extreme(xs, _)
            | NodeK::Concat(xs)
            | NodeK::ConcatNullsEmpty(xs) => {
                for x in xs {
                    x.visit_mut(f);
                }
            }
        }
        f(self);
    }
}

/// A literal.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Lit {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Dec(i128),
    Date(i32),
    /// Microseconds since the epoch.
    Ts(i64),
    Str(String),
}

/// A typed node.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TNode {
    pub(crate) ty: ETy,
    pub(crate) kind: NodeK,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arith {
    Add,
    Sub,
    Mul,
    Div,
    IntDiv,
    Rem,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum NodeK {
    Col(usize),
    Lit(Lit),
    Neg(Box<TNode>),
    Arith(Arith, Box<TNode>, Box<TNode>),
    /// A date plus (or minus, `true`) days.
    DateAdd(Box<TNode>, Box<TNode>, bool),
    /// Days from the second date to the first.
    DateDiff(Box<TNode>, Box<TNode>),
    Cmp(Cmp, Box<TNode>, Box<TNode>),
    /// `x IN (items)`: null when no item equals `x` and some comparison
    /// is null, as SQL's chain of `OR`s.
    In(Box<TNode>, Vec<TNode>),
    And(Box<TNode>, Box<TNode>),
    Or(Box<TNode>, Box<TNode>),
    Not(Box<TNode>),
    IsNull(Box<TNode>, bool),
    Case(Vec<(TNode, TNode)>, Option<Box<TNode>>),
    Coalesce(Vec<TNode>),
    /// `LEAST` (false) or `GREATEST` (true), nulls ignored.
    Extreme(Vec<TNode>, bool),
    /// `||`: null when any part is null.
    Concat(Vec<TNode>),
    /// `concat(...)`: nulls as empty strings.
    ConcatNullsEmpty(Vec<TNode>),
    Lpad(Box<TNode>, usize, String),
    /// `substring(s, start[, length])` as DuckDB reads it: characters from
    /// 1-based `start` (from the end when negative), `length` of them
    /// (before `start` when negative; to the end when left out).
    Substr(Box<TNode>, Box<TNode>, Option<Box<TNode>>),
    /// Converted to the node's type.
    Cast(Box<TNode>),
    /// An integer or decimal rounded half away from zero to a multiple of
    /// `10^k` (`round(x, -k)`), as an integer or a decimal of scale 0.
    RoundTens(Box<TNode>, u32),
    /// A random integer in `min..=max` per row; `salt` tells the terms of
    /// one expression apart.
    Uniform {
        min: i64,
        max: i64,
        salt: u64,
    },
    /// As `Uniform`, between bounds computed per row (null where a bound
    /// is null or `min > max`).
    UniformOf(Box<TNode>, Box<TNode>, u64),
    /// `scale()`: the run's `--scale` (a float), set when compiled.
    Scale,
    /// `rows('t')`: the rows of table `t` at the run's scale (an
    /// integer), set when compiled.
    Rows(String),
}
