//! The crate's error type.

use std::fmt;

/// Everything that can go wrong in this crate: malformed rowset input, or a
/// request the planner refuses to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A TSV data line did not have exactly three tab-separated fields.
    FieldCount {
        /// 1-based line number in the input text.
        line: usize,
        /// How many fields the line had.
        found: usize,
    },
    /// The size field was not a non-negative decimal integer that fits in
    /// a `u64` number of bytes.
    BadSize {
        /// 1-based line number in the input text.
        line: usize,
        /// The offending field, as written.
        text: String,
    },
    /// The size field was 0; Kudu's test loader requires at least 1 MB.
    ZeroSize {
        /// 1-based line number in the input text.
        line: usize,
    },
    /// The min key sorts after the max key (byte-wise).
    KeyOrder {
        /// 1-based line number in the input text.
        line: usize,
    },
    /// [`crate::planner::plan_brute_force`] was given more rowsets than it
    /// enumerates.
    TooManyForBruteForce {
        /// How many rowsets were given.
        n: usize,
        /// The most it accepts.
        max: usize,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::FieldCount { line, found } => write!(
                f,
                "line {line}: expected 3 tab-separated fields (size_mb, min_key, max_key), found {found}"
            ),
            Error::BadSize { line, text } => {
                write!(
                    f,
                    "line {line}: size_mb {text:?} is not an integer number of MB"
                )
            }
            Error::ZeroSize { line } => write!(f, "line {line}: size_mb must be at least 1"),
            Error::KeyOrder { line } => write!(f, "line {line}: min_key sorts after max_key"),
            Error::TooManyForBruteForce { n, max } => write!(
                f,
                "brute-force planning enumerates every subset: {n} rowsets given, at most {max} accepted"
            ),
        }
    }
}

impl std::error::Error for Error {}
