//! The crate's error type.

use std::{
    fmt,
    path::{Path, PathBuf},
};

/// What went wrong.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read or written.
    #[error("cannot {what} {}: {source}", path.display())]
    Io {
        /// What was being done.
        what: String,
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A saved run or baseline is not valid JSON of a run.
    #[error("{} is not a saved benchmark run: {reason}", path.display())]
    BadResults {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// `--baseline NAME` names no saved baseline for the suite.
    #[error(
        "no baseline `{name}`: {} does not exist (save one with --save-baseline {name})",
        path.display()
    )]
    NoBaseline {
        /// The baseline.
        name: String,
        /// Where it was looked for.
        path: PathBuf,
    },
    /// An unknown suite, size, metric or other setting.
    #[error("{0}")]
    Usage(String),
    /// A case's own work failed (generating, encoding, reading).
    #[error("{0}")]
    Case(String),
    /// A chart could not be drawn.
    #[error("{0}")]
    Chart(String),
    /// Writing a results file failed (the message names it).
    #[error(transparent)]
    Store(#[from] strata_store::Error),
}

/// Wraps any displayable error of a case's work.
pub fn case_err(e: impl fmt::Display) -> Error {
    Error::Case(e.to_string())
}

pub(crate) fn io_err(what: &str, path: &Path) -> impl FnOnce(std::io::Error) -> Error {
    let (what, path) = (what.to_string(), path.to_path_buf());
    move |source| Error::Io { what, path, source }
}
