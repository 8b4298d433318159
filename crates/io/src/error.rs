//! The error type of `strata-io`.

use std::{fmt, io, path::PathBuf};

/// Errors of this crate.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A setting that cannot be used; the message names it.
    InvalidConfig(String),
    /// Output files exist and overwriting was not asked for.
    OutputExists {
        /// The first conflicting path.
        path: PathBuf,
        /// How many conflicting files there are.
        count: usize,
    },
    /// An operating-system error on a path.
    Io {
        /// What was being done.
        action: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// The Parquet encoder failed (a write error surfaces here too).
    Parquet(parquet::errors::ParquetError),
    /// The Arrow IPC encoder failed.
    Arrow(arrow_schema::ArrowError),
    /// The data generator failed.
    Generate(strata_gen::Error),
    /// The run was stopped because another worker failed.
    Cancelled,
    /// An input file could not be read or decoded.
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
    /// An object store request failed (after any retries).
    Store {
        /// The path or URL read.
        location: String,
        /// The store's error.
        source: object_store::Error,
    },
    /// There is no file or object at a location.
    NotFound {
        /// The path or URL given.
        location: String,
        /// The store's error (its text repeats the location, so the
        /// message leaves it out).
        source: object_store::Error,
    },
    /// An input is not a valid file of its format; the message says where.
    Corrupt(String),
    /// The estimated memory of an in-memory operation exceeds the limit.
    MemoryLimit {
        /// What was being estimated.
        what: &'static str,
        /// The estimate, bytes.
        estimate: u64,
        /// The limit, bytes.
        limit: u64,
    },
    /// A `Dictionary<UInt8, _>` column met more than 256 distinct values in
    /// one row group of the direct Parquet encoder (parquet's own writer
    /// takes any number).
    DictionaryOverflow {
        /// The column's path.
        column: String,
    },
    /// Data checked against a spec lacks one of its fields or holds it
    /// in another shape or type.
    SpecMismatch {
        /// The dotted path of the spec field.
        field: String,
        /// What differs.
        message: String,
    },
}

impl Error {
    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Error::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidConfig(m) => write!(f, "{m}"),
            Error::OutputExists { path, count } => {
                write!(f, "output file {} already exists", path.display())?;
                if *count > 1 {
                    write!(f, " (and {} more)", count - 1)?;
                }
                write!(f, "; pass --overwrite to replace")
            }
            Error::Io {
                action,
                path,
                source,
            } => write!(f, "cannot {action} {}: {source}", path.display()),
            Error::Parquet(e) => write!(f, "parquet: {e}"),
            Error::Arrow(e) => write!(f, "arrow: {e}"),
            Error::Generate(e) => write!(f, "generate: {e}"),
            Error::Cancelled => write!(f, "cancelled after an earlier error"),
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
            Error::Store { location, source } => write!(f, "cannot read {location}: {source}"),
            Error::NotFound { location, .. } => {
                write!(
                    f,
                    "cannot open {location}: not found (no such file or object)"
                )
            }
            Error::Corrupt(m) => write!(f, "invalid file: {m}"),
            Error::DictionaryOverflow { column } => write!(
                f,
                "column {column} has more than 256 dictionary values in one row group"
            ),
            Error::SpecMismatch { field, message } => {
                write!(f, "field `{field}` does not match the spec: {message}")
            }
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
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::Parquet(e) => Some(e),
            Error::Arrow(e) => Some(e),
            Error::Generate(e) => Some(e),
            Error::Read { source, .. } => Some(source.as_ref()),
            Error::UnsupportedSortKey { source, .. } => Some(source),
            Error::Row(e) => Some(e),
            Error::Store { source, .. } => Some(source),
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
pub(crate) fn human_bytes(n: u64) -> String {
    if n < 1024 {
        short_bytes(n)
    } else {
        format!("{} ({n} bytes)", short_bytes(n))
    }
}

impl From<strata_gen::Error> for Error {
    fn from(e: strata_gen::Error) -> Self {
        Error::Generate(e)
    }
}
