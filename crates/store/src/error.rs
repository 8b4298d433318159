//! The error type of `strata-store`.

use std::{fmt, io, path::PathBuf};

/// Errors of locations, sources, fetches, uploads and atomic outputs.
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
    /// An object store request failed (after any retries).
    ObjectStore {
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
    /// A read past the end of a source, or a source whose size is not
    /// what it claims; the message says where.
    Corrupt(String),
}

impl Error {
    /// An [`Error::Io`]: `action` failed on `path`.
    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
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
            Error::ObjectStore { location, source } => {
                write!(f, "cannot read {location}: {source}")
            }
            Error::NotFound { location, .. } => {
                write!(
                    f,
                    "cannot open {location}: not found (no such file or object)"
                )
            }
            Error::Corrupt(m) => write!(f, "invalid file: {m}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::ObjectStore { source, .. } => Some(source),
            _ => None,
        }
    }
}
