//! The error type of `strata-store`.

use std::{io, path::PathBuf};

/// Errors of locations, sources, fetches, uploads and atomic outputs.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A setting that cannot be used; the message names it.
    #[error("{0}")]
    InvalidConfig(String),
    /// Output files exist and overwriting was not asked for.
    #[error(
        "output file {} already exists{}; pass --overwrite to replace",
        path.display(),
        more(*count)
    )]
    OutputExists {
        /// The first conflicting path.
        path: PathBuf,
        /// How many conflicting files there are.
        count: usize,
    },
    /// An operating-system error on a path.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// An object store request failed (after any retries).
    #[error("cannot read {location}: {source}")]
    ObjectStore {
        /// The path or URL read.
        location: String,
        /// The store's error.
        source: object_store::Error,
    },
    /// There is no file or object at a location.
    #[error("cannot open {location}: not found (no such file or object)")]
    NotFound {
        /// The path or URL given.
        location: String,
        /// The store's error (its text repeats the location, so the
        /// message leaves it out, and it is not reported as a cause).
        error: object_store::Error,
    },
    /// A read past the end of a source, or a source whose size is not
    /// what it claims; the message says where.
    #[error("invalid file: {0}")]
    Corrupt(String),
}

/// ` (and N more)` for more than one conflicting file.
fn more(count: usize) -> String {
    if count > 1 {
        format!(" (and {} more)", count - 1)
    } else {
        String::new()
    }
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

/// The shared constructors of the error enums that wrap [`Error`] (those
/// with `impl From<strata_store::Error>`): with this trait in scope,
/// `Error::io(action, path, source)` builds an [`Error::Io`] and wraps it,
/// so each crate does not write the helper again.
pub trait FromStore: From<Error> {
    /// An IO error on `path`, as [`Error::Io`], wrapped.
    fn io(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Self::from(Error::io(action, path, source))
    }
}

impl<E: From<Error>> FromStore for E {}
