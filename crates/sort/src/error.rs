//! The error type of `strata-sort`.

use std::{fmt, path::PathBuf};

/// Errors of sorting files and merging sorted runs.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A setting that cannot be used; the message names it.
    InvalidConfig(String),
    /// An input file could not be decoded.
    Read {
        /// The input.
        path: PathBuf,
        /// What went wrong.
        source: Box<Error>,
    },
    /// A sort key names a column the input does not have.
    UnknownColumn {
        /// The name given.
        name: String,
        /// The input's top-level columns, in schema order.
        available: Vec<String>,
    },
    /// A sort key column has a type the row encoder cannot order.
    UnsupportedSortKey {
        /// The column.
        column: String,
        /// Its type.
        data_type: arrow_schema::DataType,
        /// The row encoder's reason.
        source: strata_row::Error,
    },
    /// The row encoder failed.
    Row(strata_row::Error),
    /// The estimated memory of an in-memory operation exceeds the limit.
    MemoryLimit {
        /// What was being estimated.
        what: &'static str,
        /// The estimate, bytes.
        estimate: u64,
        /// The limit, bytes.
        limit: u64,
    },
    /// parquet's reader or writer failed.
    Parquet(parquet::errors::ParquetError),
    /// arrow failed (decoding, concatenating or gathering).
    Arrow(arrow_schema::ArrowError),
    /// Opening, reading or committing a file failed.
    Store(strata_store::Error),
    /// Encoding the output failed.
    Write(strata_parquet::Error),
    /// The inputs of a merge are not valid (unsorted, differing schemas, a
    /// missing key column); the message says why.
    Invalid(String),
    /// A Parquet file could not be read.
    ParquetFile {
        /// The file.
        path: PathBuf,
        /// The error.
        source: parquet::errors::ParquetError,
    },
    /// An output file could not be written.
    File {
        /// The file.
        path: PathBuf,
        /// The error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl Error {
    /// An IO error on `path`, as [`strata_store::Error::Io`].
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        Error::Store(strata_store::Error::io(action, path, source))
    }

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

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidConfig(m) => write!(f, "{m}"),
            Error::Read { path, source } => write!(f, "cannot read {}: {source}", path.display()),
            Error::UnknownColumn { name, available } => write!(
                f,
                "no column '{name}' in the input (columns: {})",
                available.join(", ")
            ),
            Error::UnsupportedSortKey {
                column,
                data_type,
                source,
            } => write!(
                f,
                "cannot sort by column '{column}' of type {data_type}: {source}"
            ),
            Error::Row(e) => write!(f, "row encoding: {e}"),
            Error::MemoryLimit {
                what,
                estimate,
                limit,
            } => write!(
                f,
                "{what} needs an estimated {} but --memory-limit is {}",
                human_bytes(*estimate),
                human_bytes(*limit)
            ),
            Error::Parquet(e) => write!(f, "parquet: {e}"),
            Error::Arrow(e) => write!(f, "arrow: {e}"),
            Error::Store(e) => e.fmt(f),
            Error::Write(e) => e.fmt(f),
            Error::Invalid(m) => write!(f, "{m}"),
            Error::ParquetFile { path, source } => {
                write!(f, "{}: parquet: {source}", path.display())
            }
            Error::File { path, source } => write!(f, "{}: {source}", path.display()),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Read { source, .. } => Some(source.as_ref()),
            Error::UnsupportedSortKey { source, .. } => Some(source),
            Error::Row(e) => Some(e),
            Error::Parquet(e) => Some(e),
            Error::Arrow(e) => Some(e),
            Error::Store(e) => e.source(),
            Error::Write(e) => e.source(),
            Error::ParquetFile { source, .. } => Some(source),
            Error::File { source, .. } => Some(source.as_ref()),
            _ => None,
        }
    }
}

impl From<parquet::errors::ParquetError> for Error {
    fn from(e: parquet::errors::ParquetError) -> Self {
        Error::Parquet(e)
    }
}

impl From<arrow_schema::ArrowError> for Error {
    fn from(e: arrow_schema::ArrowError) -> Self {
        Error::Arrow(e)
    }
}

impl From<strata_row::Error> for Error {
    fn from(e: strata_row::Error) -> Self {
        Error::Row(e)
    }
}

impl From<strata_store::Error> for Error {
    fn from(e: strata_store::Error) -> Self {
        Error::Store(e)
    }
}

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

/// [`short_bytes`] with the exact count, as in `1.5 KiB (1536 bytes)`.
fn human_bytes(n: u64) -> String {
    if n < 1024 {
        short_bytes(n)
    } else {
        format!("{} ({n} bytes)", short_bytes(n))
    }
}
