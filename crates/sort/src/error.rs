//! The error type of `strata-sort`.

use std::path::PathBuf;

/// Errors of sorting files and merging sorted runs.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A setting that cannot be used; the message names it.
    #[error("{0}")]
    InvalidConfig(String),
    /// An input file could not be decoded.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The input.
        path: PathBuf,
        /// What went wrong.
        source: Box<Error>,
    },
    /// A sort key names a column the input does not have.
    #[error("no column '{name}' in the input (columns: {})", available.join(", "))]
    UnknownColumn {
        /// The name given.
        name: String,
        /// The input's top-level columns, in schema order.
        available: Vec<String>,
    },
    /// A sort key column has a type the row encoder cannot order.
    #[error("cannot sort by column '{column}' of type {data_type}: {source}")]
    UnsupportedSortKey {
        /// The column.
        column: String,
        /// Its type.
        data_type: arrow_schema::DataType,
        /// The row encoder's reason.
        source: strata_row::Error,
    },
    /// The row encoder failed.
    #[error("row encoding: {0}")]
    Row(#[from] strata_row::Error),
    /// parquet's reader or writer failed.
    #[error("parquet: {0}")]
    Parquet(#[from] parquet::errors::ParquetError),
    /// arrow failed (decoding, concatenating or gathering).
    #[error("arrow: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
    /// strata-scan's reader failed on an input.
    #[error(transparent)]
    Scan(#[from] strata_scan::Error),
    /// Opening, reading or committing a file failed.
    #[error(transparent)]
    Store(#[from] strata_store::Error),
    /// Encoding the output failed.
    #[error(transparent)]
    Write(strata_parquet::Error),
    /// The inputs of a merge are not valid (unsorted, differing schemas, a
    /// missing key column); the message says why.
    #[error("{0}")]
    Invalid(String),
    /// A Parquet file could not be read.
    #[error("{}: parquet: {source}", path.display())]
    ParquetFile {
        /// The file.
        path: PathBuf,
        /// The error.
        source: parquet::errors::ParquetError,
    },
    /// The sort was interrupted ([`crate::progress::SortProgress::interrupt`])
    /// before its output was published; nothing of it was kept.
    #[error("interrupted before the output was complete; nothing was kept")]
    Interrupted,
    /// An output file could not be written.
    #[error("{}: {source}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// The error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl Error {
    /// A Parquet error reading `path`.
    pub(crate) fn parquet_at(
        path: &std::path::Path,
        source: parquet::errors::ParquetError,
    ) -> Self {
        Error::ParquetFile {
            path: path.to_path_buf(),
            source,
        }
    }

    /// A format error of `strata-parquet` ([`strata_parquet::Format::detect`],
    /// [`strata_parquet::Format::for_output`]) as this crate's: an unusable
    /// setting stays [`Error::InvalidConfig`].
    pub(crate) fn from_format(e: strata_parquet::Error) -> Self {
        match e {
            strata_parquet::Error::InvalidConfig(m) => Error::InvalidConfig(m),
            e => e.into(),
        }
    }

    /// An error reading the input `path` as the user sees it: IO errors and
    /// bad settings as they are, anything about the file's contents as an
    /// [`Error::Read`] naming it.
    pub(crate) fn reading(path: &std::path::Path, e: Error) -> Self {
        match e {
            e @ (Error::Store(strata_store::Error::Io { .. }) | Error::InvalidConfig(_)) => e,
            e => Error::Read {
                path: path.to_path_buf(),
                source: Box::new(e),
            },
        }
    }

    /// An error writing the file `path`.
    pub(crate) fn file(
        path: &std::path::Path,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Error::File {
            path: path.to_path_buf(),
            source: Box::new(source),
        }
    }
}

/// A writer's error; its store errors are this crate's store errors.
impl From<strata_parquet::Error> for Error {
    fn from(e: strata_parquet::Error) -> Self {
        match e {
            strata_parquet::Error::Store(e) => Error::Store(e),
            e => Error::Write(e),
        }
    }
}

/// Bytes with a binary unit, as in `1.5 GiB` (plain `N bytes` below 1 KiB).
pub(crate) fn short_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} bytes");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = UNITS[0];
    for u in &UNITS[1..] {
        if v < 1024.0 {
            break;
        }
        v /= 1024.0;
        unit = u;
    }
    format!("{v:.1} {unit}")
}
