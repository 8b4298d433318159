//! The crate's error type.

use std::fmt;

use arrow_schema::ArrowError;

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Distribution parameters that cannot be sampled.
    #[error("invalid distribution: {0}")]
    InvalidDistribution(String),
    /// A field's values could not be made (an expression that overflows,
    /// a sequence that would pass its type's range): where in the spec,
    /// which table and field, and why.
    #[error("{0}")]
    Field(Box<FieldError>),
    /// A batch whose variable-length column passes 2 GiB, or one of whose
    /// list or map levels passes 2^26 elements.
    #[error(
        "batch too large: a string column passes 2 GiB or a list level passes \
         67,108,864 elements; use smaller batches"
    )]
    BatchTooLarge,
    /// Arrow rejected an array that was built.
    #[error("arrow: {0}")]
    Arrow(#[from] ArrowError),
}

/// An [`Error::Field`]: `ORIGIN:LINE: table `T`: field `F`: MESSAGE`, the
/// parts not known left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The spec's file or preset name (empty when not known).
    pub origin: String,
    /// The field's line in the spec (0 when not known).
    pub line: usize,
    /// The table (empty when not known).
    pub table: String,
    /// The field's dotted path.
    pub field: String,
    /// What went wrong.
    pub message: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.origin.is_empty() {
            write!(f, "{}", self.origin)?;
            if self.line > 0 {
                write!(f, ":{}", self.line)?;
            }
            write!(f, ": ")?;
        } else if self.line > 0 {
            write!(f, "line {}: ", self.line)?;
        }
        if !self.table.is_empty() {
            write!(f, "table `{}`: ", self.table)?;
        }
        write!(f, "field `{}`: {}", self.field, self.message)
    }
}

impl Error {
    /// An [`Error::Field`] of field `field` (at spec line `line`).
    pub(crate) fn field(field: &str, line: usize, message: String) -> Error {
        Error::Field(Box::new(FieldError {
            origin: String::new(),
            line,
            table: String::new(),
            field: field.to_string(),
            message,
        }))
    }

    /// This error as one of field `field` at `line`: an invalid
    /// distribution or an Arrow error raised while making its values
    /// (errors that already name their field, and batch sizes, as they
    /// are).
    pub(crate) fn in_field(self, field: &str, line: usize) -> Error {
        match self {
            Error::InvalidDistribution(m) => Error::field(field, line, m),
            Error::Arrow(e) => Error::field(field, line, e.to_string()),
            e => e,
        }
    }

    /// Fills in the table and the spec's origin of a field error that
    /// lacks them.
    pub(crate) fn in_table(self, table: &str, origin: &str) -> Error {
        match self {
            Error::Field(mut f) => {
                if f.table.is_empty() {
                    f.table = table.to_string();
                }
                if f.origin.is_empty() {
                    f.origin = origin.to_string();
                }
                Error::Field(f)
            }
            e => e,
        }
    }
}
