//! The manifest: the list of a dataset's files with their rows, bytes and
//! key bounds, read and replaced whole through [`Dataset`]. It is the
//! dataset's commit point (see [`crate::dataset`]).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Dataset, MANIFEST};
use crate::Error;

/// The manifest format this crate writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// One file of a dataset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    /// The file's name inside the dataset directory.
    pub name: String,
    /// Rows in it.
    pub rows: u64,
    /// Its size in bytes.
    pub bytes: u64,
    /// The strata-row encoding of its smallest key, in hex.
    pub min_key: String,
    /// The strata-row encoding of its largest key, in hex.
    pub max_key: String,
}

/// The list of a dataset's files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`FORMAT_VERSION`] when written.
    pub format: u32,
    /// Increases by one with every change.
    pub generation: u64,
    /// The key columns every file is sorted by, most significant first.
    pub key: Vec<String>,
    /// The files.
    pub files: Vec<FileEntry>,
    /// Files this generation replaced, to be removed (the next run removes
    /// any a stopped run left).
    #[serde(default)]
    pub obsolete: Vec<String>,
}

/// Hex text of bytes (lowercase).
pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Bytes of hex text.
///
/// # Errors
///
/// [`Error::Invalid`] for text that is not even-length hex.
pub fn from_hex(text: &str) -> Result<Vec<u8>, Error> {
    let bad = || Error::Invalid(format!("'{text}' is not a hex key"));
    if !text.len().is_multiple_of(2) {
        return Err(bad());
    }
    (0..text.len())
        .step_by(2)
        .map(|i| {
            text.get(i..i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(bad)
        })
        .collect()
}

impl Manifest {
    /// Reads the manifest of the dataset in directory `dir`.
    ///
    /// # Errors
    ///
    /// As [`Manifest::read`].
    pub fn load(dir: &Path) -> Result<Manifest, Error> {
        Manifest::read(&Dataset::local(dir))
    }

    /// Reads `ds`'s manifest.
    ///
    /// # Errors
    ///
    /// [`Error::Io`], [`Error::Store`] or [`Error::ObjectStore`] when it cannot be
    /// read, [`Error::Invalid`] when there is none, or it is not a
    /// manifest of a known format, or lists a file twice.
    pub fn read(ds: &Dataset) -> Result<Manifest, Error> {
        let name = ds.file_display(MANIFEST);
        let Some(text) = ds.read_manifest()? else {
            return Err(Error::Invalid(format!(
                "{} has no manifest ({name}); create one with `strata compact init`",
                ds.display()
            )));
        };
        Manifest::parse(&text, &name)
    }

    /// Parses a manifest's text; `name` names it in errors.
    ///
    /// # Errors
    ///
    /// [`Error::Invalid`] when `text` is not a manifest of a known format,
    /// lists a file twice or names a path outside the dataset.
    pub fn parse(text: &str, name: &str) -> Result<Manifest, Error> {
        let m: Manifest = serde_json::from_str(text)
            .map_err(|e| Error::Invalid(format!("{name} is not a valid manifest: {e}")))?;
        if m.format != FORMAT_VERSION {
            return Err(Error::Invalid(format!(
                "{name} has format {}, this build reads {FORMAT_VERSION}",
                m.format
            )));
        }
        let mut names: Vec<&str> = m.files.iter().map(|f| f.name.as_str()).collect();
        names.sort_unstable();
        let outside =
            |n: &str| n.is_empty() || n == "." || n == ".." || n.contains('/') || n.contains('\\');
        if names.windows(2).any(|w| w[0] == w[1]) || names.iter().any(|n| outside(n)) {
            return Err(Error::Invalid(format!(
                "{name} lists a file twice or a path outside the dataset"
            )));
        }
        Ok(m)
    }

    /// Writes the manifest to directory `dir` ([`Manifest::write`]).
    ///
    /// # Errors
    ///
    /// As [`Manifest::write`].
    pub fn store(&self, dir: &Path) -> Result<(), Error> {
        self.write(&Dataset::local(dir))
    }

    /// Replaces `ds`'s manifest in one step: a synced temporary renamed
    /// over the old one, or one object `PUT`. A reader sees the old or the
    /// new manifest, whole.
    ///
    /// # Errors
    ///
    /// [`Error::Io`], [`Error::Store`] or [`Error::ObjectStore`] when writing fails
    /// (the old manifest is then untouched).
    pub fn write(&self, ds: &Dataset) -> Result<(), Error> {
        let mut text = serde_json::to_string_pretty(self)
            .map_err(|e| Error::Invalid(format!("cannot write the manifest: {e}")))?;
        text.push('\n');
        ds.write_manifest(&text)
    }

    /// Total rows.
    pub fn rows(&self) -> u64 {
        self.files.iter().map(|f| f.rows).sum()
    }
}
