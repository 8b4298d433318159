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
//! documented in docs/src/spec/expressions.md. The value is then converted to the field's
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

/// The most digits of a decimal expression (Arrow's `Decimal128`).
const MAX_PRECISION: u8 = 38;

mod check;
mod decimal;
mod eval;
mod predicate;
mod text;
mod value;

pub(crate) use check::{check, check_target, check_unless_qualified, is_test, not_a_test};
pub(crate) use eval::{evaluate, test};
pub use predicate::{
    BoundTest, Clause, CmpOp, Comparison, Predicate, PredicateError, SqlLiteral, Test,
};
pub(crate) use value::Inputs;
