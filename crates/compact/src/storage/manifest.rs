//! The manifest: the list of a dataset's files with their rows, bytes and
//! key bounds, read and replaced whole through [`Dataset`]. It is the
//! dataset's commit point (see [`crate::dataset`]).

use std::path::Path;

use arrow_schema::SortOptions;
use serde::{Deserialize, Serialize};

use super::{Dataset, MANIFEST};
use crate::Error;

/// The manifest format this crate writes for an all-ascending key (nulls
/// first), and the oldest it reads.
pub const FORMAT_VERSION: u32 = 1;

/// The format written when some key column has another order
/// ([`Manifest::order`]): a build that reads only format 1 refuses it
/// rather than merging by the wrong order.
pub const FORMAT_VERSION_ORDERED: u32 = 2;

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

/// The order of one key column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyOrder {
    /// Largest first.
    pub descending: bool,
    /// Nulls before every value (else after).
    pub nulls_first: bool,
}

impl KeyOrder {
    /// Ascending with nulls first: the order of a key column without an
    /// entry in [`Manifest::order`].
    pub const ASCENDING: KeyOrder = KeyOrder {
        descending: false,
        nulls_first: true,
    };
}

impl From<SortOptions> for KeyOrder {
    fn from(o: SortOptions) -> Self {
        KeyOrder {
            descending: o.descending,
            nulls_first: o.nulls_first,
        }
    }
}

impl From<KeyOrder> for SortOptions {
    fn from(o: KeyOrder) -> Self {
        SortOptions {
            descending: o.descending,
            nulls_first: o.nulls_first,
        }
    }
}

/// The list of a dataset's files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`FORMAT_VERSION`], or [`FORMAT_VERSION_ORDERED`] when `order` is
    /// not empty.
    pub format: u32,
    /// Increases by one with every change.
    pub generation: u64,
    /// The key columns every file is sorted by, most significant first.
    pub key: Vec<String>,
    /// The order of each key column; empty (or shorter than `key`): the
    /// rest ascending with nulls first. The key bounds are encoded in this
    /// order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub order: Vec<KeyOrder>,
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
    /// [`Error::Invalid`] when `text` is not a manifest of a known format
    /// or breaks one of its rules ([`Manifest::validate`]).
    pub fn parse(text: &str, name: &str) -> Result<Manifest, Error> {
        let m: Manifest = serde_json::from_str(text)
            .map_err(|e| Error::Invalid(format!("{name} is not a valid manifest: {e}")))?;
        if m.format != FORMAT_VERSION && m.format != FORMAT_VERSION_ORDERED {
            return Err(Error::Invalid(format!(
                "{name} has format {}, this build reads {FORMAT_VERSION} and \
                 {FORMAT_VERSION_ORDERED}",
                m.format
            )));
        }
        m.validate()
            .map_err(|why| Error::Invalid(format!("{name} is not a valid manifest: {why}")))?;
        Ok(m)
    }

    /// Checks the rules every manifest keeps: at least one key column,
    /// each named once and no more orders than key columns; a generation
    /// of at least 1; each file listed once, by a visible `.parquet` name
    /// inside the dataset, with hex key bounds, the smallest not after
    /// the largest; obsolete names inside the dataset and not listed.
    ///
    /// # Errors
    ///
    /// The first rule broken, in words.
    pub fn validate(&self) -> Result<(), String> {
        if self.key.is_empty() {
            return Err(
                "it names no key columns (rebuild it with `strata compact init DIR --key COL,... \
                        --force`)"
                    .into(),
            );
        }
        let mut keys: Vec<&str> = self.key.iter().map(String::as_str).collect();
        keys.sort_unstable();
        if let Some(k) = keys.iter().find(|k| k.is_empty()) {
            return Err(format!("it has an empty key column name '{k}'"));
        }
        if let Some(w) = keys.windows(2).find(|w| w[0] == w[1]) {
            return Err(format!("key column '{}' appears twice", w[0]));
        }
        if self.order.len() > self.key.len() {
            return Err(format!(
                "it gives {} key orders for {} key columns",
                self.order.len(),
                self.key.len()
            ));
        }
        if self.generation == 0 {
            return Err("its generation is 0 (the first is 1)".into());
        }
        let outside =
            |n: &str| n.is_empty() || n == "." || n == ".." || n.contains('/') || n.contains('\\');
        let mut names: Vec<&str> = self.files.iter().map(|f| f.name.as_str()).collect();
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            return Err(format!("it lists {} twice", w[0]));
        }
        for f in &self.files {
            if outside(&f.name) {
                return Err(format!("it lists '{}', a path outside the dataset", f.name));
            }
            if f.name.starts_with('.') || !f.name.ends_with(".parquet") {
                return Err(format!(
                    "it lists '{}': data files are visible .parquet files",
                    f.name
                ));
            }
            let (min, max) = (from_hex(&f.min_key), from_hex(&f.max_key));
            match (min, max) {
                (Ok(min), Ok(max)) if min <= max => {}
                (Ok(_), Ok(_)) => {
                    return Err(format!(
                        "its entry for {}: its min_key sorts after its max_key",
                        f.name
                    ));
                }
                (Err(e), _) | (_, Err(e)) => {
                    return Err(format!("its entry for {}: {e}", f.name));
                }
            }
        }
        for n in &self.obsolete {
            if outside(n) {
                return Err(format!(
                    "it marks '{n}' obsolete, a path outside the dataset"
                ));
            }
            if names.binary_search(&n.as_str()).is_ok() {
                return Err(format!("it both lists {n} and marks it obsolete"));
            }
        }
        Ok(())
    }

    /// The order of every key column (see [`Manifest::order`]).
    pub fn sort_options(&self) -> Vec<SortOptions> {
        (0..self.key.len())
            .map(|i| {
                self.order
                    .get(i)
                    .copied()
                    .unwrap_or(KeyOrder::ASCENDING)
                    .into()
            })
            .collect()
    }

    /// The key as `COL[:desc][:nulls_last]` terms, comma-separated (the
    /// syntax `--key` takes).
    pub fn key_text(&self) -> String {
        self.key
            .iter()
            .zip(self.sort_options())
            .map(|(k, o)| {
                let mut t = k.clone();
                if o.descending {
                    t.push_str(":desc");
                }
                if o.nulls_first != SortOptions::default().nulls_first {
                    t.push_str(if o.nulls_first {
                        ":nulls_first"
                    } else {
                        ":nulls_last"
                    });
                }
                t
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    /// A manifest of `generation` sorted by `key` in `order` (trailing
    /// ascending entries dropped), in the format that order needs.
    pub fn new(
        generation: u64,
        key: Vec<String>,
        mut order: Vec<KeyOrder>,
        files: Vec<FileEntry>,
        obsolete: Vec<String>,
    ) -> Manifest {
        while order.last() == Some(&KeyOrder::ASCENDING) {
            order.pop();
        }
        Manifest {
            format: Manifest::format_for(&order),
            generation,
            key,
            order,
            files,
            obsolete,
        }
    }

    /// [`FORMAT_VERSION_ORDERED`] when some key column is not ascending
    /// with nulls first, else [`FORMAT_VERSION`].
    pub fn format_for(order: &[KeyOrder]) -> u32 {
        if order.iter().all(|o| *o == KeyOrder::ASCENDING) {
            FORMAT_VERSION
        } else {
            FORMAT_VERSION_ORDERED
        }
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
        ds.write_manifest(&self.text()?)
    }

    /// The manifest as written: pretty JSON and a newline.
    ///
    /// # Errors
    ///
    /// [`Error::Invalid`] if it cannot be serialised.
    pub fn text(&self) -> Result<String, Error> {
        let mut text = serde_json::to_string_pretty(self)
            .map_err(|e| Error::Invalid(format!("cannot write the manifest: {e}")))?;
        text.push('\n');
        Ok(text)
    }

    /// Total rows.
    pub fn rows(&self) -> u64 {
        self.files.iter().map(|f| f.rows).sum()
    }
}
