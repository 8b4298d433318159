//! The crate's error type.

use std::path::PathBuf;

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A column type the table format cannot hold, or a layout it cannot
    /// express: the column and why.
    #[error("{0}")]
    Unsupported(String),
    /// A table location that holds something else than a table of this
    /// format, or metadata that does not read: the path and why.
    #[error("{}: {reason}", path.display())]
    BadTable {
        /// The table or metadata file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// Another writer committed the version this commit was to claim.
    #[error(
        "{}: another writer committed version {version} first",
        path.display()
    )]
    Conflict {
        /// The table.
        path: PathBuf,
        /// The version both claimed.
        version: u64,
    },
    /// A data file's Parquet footer does not read.
    #[error("data file {}: {source}", path.display())]
    Parquet {
        /// The data file.
        path: PathBuf,
        /// The reader's error.
        source: parquet::errors::ParquetError,
    },
    /// An operating-system error on a path.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The path.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A write through the atomic-output helpers failed.
    #[error(transparent)]
    Store(#[from] strata_store::Error),
    /// Avro encoding failed (a manifest or manifest list).
    #[error("cannot write the Avro file {}: {reason}", path.display())]
    Avro {
        /// The manifest or manifest list.
        path: PathBuf,
        /// The encoder's message.
        reason: String,
    },
    /// A partition transform failed on a file's values.
    #[error(transparent)]
    Layout(#[from] strata_layout::Error),
    /// A change a table cannot take (a file it does not hold, a row past
    /// a file's end): the table or file, and why. Nothing was written.
    #[error("{}: {reason}", path.display())]
    BadChange {
        /// The table or the file named.
        path: PathBuf,
        /// What is wrong with the change.
        reason: String,
    },
    /// A file the table's metadata needs (an Iceberg delete file) could
    /// not be encoded.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The writer's error (boxed: it is large).
        source: Box<strata_parquet::Error>,
    },
}

impl Error {
    pub(crate) fn io(action: &'static str, path: &std::path::Path, source: std::io::Error) -> Self {
        Error::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
    }
}
