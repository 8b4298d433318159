//! The crate's error type.

use std::{
    fmt,
    path::{Path, PathBuf},
};

/// What went wrong.
#[derive(Debug)]
pub enum Error {
    /// A file could not be read or written.
    Io {
        /// What was being done.
        what: String,
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A saved run or baseline is not valid JSON of a run.
    BadResults {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// `--baseline NAME` names no saved baseline for the suite.
    NoBaseline {
        /// The baseline.
        name: String,
        /// Where it was looked for.
        path: PathBuf,
    },
    /// An unknown suite, size, metric or other setting.
    Usage(String),
    /// A case's own work failed (generating, encoding, reading).
    Case(String),
    /// A chart could not be drawn.
    Chart(String),
    /// Writing a results file failed (the message names it).
    Store(strata_store::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { what, path, source } => {
                write!(f, "cannot {what} {}: {source}", path.display())
            }
            Error::Store(e) => e.fmt(f),
            Error::BadResults { path, reason } => {
                write!(
                    f,
                    "{} is not a saved benchmark run: {reason}",
                    path.display()
                )
            }
            Error::NoBaseline { name, path } => write!(
                f,
                "no baseline `{name}`: {} does not exist (save one with --save-baseline {name})",
                path.display()
            ),
            Error::Usage(m) | Error::Case(m) | Error::Chart(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::Store(e) => e.source(),
            _ => None,
        }
    }
}

/// Wraps any displayable error of a case's work.
pub fn case_err(e: impl fmt::Display) -> Error {
    Error::Case(e.to_string())
}

pub(crate) fn io_err(what: &str, path: &Path) -> impl FnOnce(std::io::Error) -> Error {
    let (what, path) = (what.to_string(), path.to_path_buf());
    move |source| Error::Io { what, path, source }
}

impl From<strata_store::Error> for Error {
    fn from(e: strata_store::Error) -> Self {
        Error::Store(e)
    }
}
