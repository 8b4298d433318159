//! The crate's one error type.

/// What can go wrong while inferring a spec or comparing two datasets.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An input could not be listed, opened or decoded.
    #[error("{0}")]
    Scan(#[from] strata_scan::Error),
    /// A location could not be parsed or listed.
    #[error("{0}")]
    Store(#[from] strata_store::Error),
    /// A CSV file could not be read.
    #[error("{path}: {message}")]
    Csv {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// An operating-system error on a path.
    #[error("cannot {action} {path}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The path.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// The inputs do not make a dataset: no table, two tables of one
    /// name, files of one table with different columns.
    #[error("{0}")]
    Input(String),
    /// A bad option.
    #[error("{0}")]
    Options(String),
    /// The written spec did not parse back (a bug: every spec written is
    /// parsed before it is returned).
    #[error("the inferred spec does not parse: {0}")]
    Spec(String),
}

impl Error {
    pub(crate) fn io(
        action: &'static str,
        path: impl std::fmt::Display,
        source: std::io::Error,
    ) -> Self {
        Error::Io {
            action,
            path: path.to_string(),
            source,
        }
    }
}
