//! Output format and codec choices, parsed from their command-line spelling.

use std::{fmt, io::Read, path::Path, str::FromStr};
use strata_store::FromStore as _;

use serde::Serialize;

use crate::Error;

/// The file format written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Apache Parquet.
    Parquet,
    /// Arrow IPC file format (Feather v2).
    Ipc,
}

impl Format {
    /// The magic bytes a Parquet file starts and ends with.
    pub const PARQUET_MAGIC: &'static [u8] = b"PAR1";
    /// The magic bytes an Arrow IPC file starts and ends with.
    pub const IPC_MAGIC: &'static [u8] = b"ARROW1";

    /// The file extension written, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Parquet => "parquet",
            Format::Ipc => "arrow",
        }
    }

    /// The format a name stands for (case-insensitive): `parquet`, or
    /// `ipc`, `arrow` or `feather`. Flags and extensions both use it.
    pub fn from_name(name: &str) -> Option<Format> {
        match name.to_ascii_lowercase().as_str() {
            "parquet" => Some(Format::Parquet),
            "ipc" | "arrow" | "feather" => Some(Format::Ipc),
            _ => None,
        }
    }

    /// The format `path`'s extension names: `.parquet`, or `.arrow`,
    /// `.ipc` or `.feather` (case-insensitive).
    pub fn from_extension(path: &Path) -> Option<Format> {
        Format::from_name(&path.extension()?.to_string_lossy())
    }

    /// The format whose magic `head` (a file's first bytes) starts with.
    pub fn from_head(head: &[u8]) -> Option<Format> {
        if head.starts_with(Format::PARQUET_MAGIC) {
            Some(Format::Parquet)
        } else if head.starts_with(Format::IPC_MAGIC) {
            Some(Format::Ipc)
        } else {
            None
        }
    }

    /// The format whose magic `tail` (a file's last bytes) ends with.
    pub fn from_tail(tail: &[u8]) -> Option<Format> {
        if tail.ends_with(Format::PARQUET_MAGIC) {
            Some(Format::Parquet)
        } else if tail.ends_with(Format::IPC_MAGIC) {
            Some(Format::Ipc)
        } else {
            None
        }
    }

    /// The format of the local file at `path`, from its first bytes.
    ///
    /// # Errors
    /// [`Error::Store`] (IO) when it cannot be opened or read,
    /// [`Error::InvalidConfig`] when it starts with neither magic.
    pub fn detect(path: &Path) -> Result<Format, Error> {
        let file = std::fs::File::open(path).map_err(|e| Error::io("open", path, e))?;
        let mut head = Vec::with_capacity(Format::IPC_MAGIC.len());
        file.take(Format::IPC_MAGIC.len() as u64)
            .read_to_end(&mut head)
            .map_err(|e| Error::io("read", path, e))?;
        Format::from_head(&head).ok_or_else(|| {
            Error::InvalidConfig(format!(
                "{} is not a Parquet or Arrow IPC file (no PAR1 or ARROW1 magic at its start)",
                path.display()
            ))
        })
    }

    /// The format an output path asks for by its extension.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] for any other extension, or none.
    pub fn for_output(path: &Path) -> Result<Format, Error> {
        Format::from_extension(path).ok_or_else(|| {
            Error::InvalidConfig(format!(
                "cannot tell the output format of {} from its extension{} (expected .parquet, \
                 .arrow, .ipc or .feather)",
                path.display(),
                extension_note(path)
            ))
        })
    }
}

/// ` '.EXT'` for a path with an extension (lowercase), else nothing: the
/// part of an unknown-extension message that quotes it.
pub fn extension_note(path: &Path) -> String {
    path.extension()
        .map(|e| format!(" '.{}'", e.to_string_lossy().to_ascii_lowercase()))
        .unwrap_or_default()
}

impl FromStr for Format {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        Format::from_name(s).ok_or_else(|| {
            Error::InvalidConfig(format!("unknown format '{s}' (expected parquet or ipc)"))
        })
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Parquet => "parquet",
            Format::Ipc => "ipc",
        })
    }
}

/// A compression codec and, for zstd, its level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// No compression.
    None,
    /// Snappy (Parquet only).
    Snappy,
    /// LZ4: `LZ4_RAW` in Parquet, LZ4 frames in IPC.
    Lz4,
    /// Zstandard at a level.
    Zstd(i32),
}

/// The zstd level used when none is given.
pub const DEFAULT_ZSTD_LEVEL: i32 = 1;

impl FromStr for Compression {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        let lower = s.to_ascii_lowercase();
        let (name, level) = match lower.split_once(':') {
            Some((n, l)) => (n, Some(l)),
            None => (lower.as_str(), None),
        };
        let bad = || {
            Error::InvalidConfig(format!(
                "unknown compression '{s}' (expected none, snappy, lz4 or zstd[:LEVEL])"
            ))
        };
        let c = match name {
            "none" | "uncompressed" => Compression::None,
            "snappy" => Compression::Snappy,
            "lz4" | "lz4_raw" => Compression::Lz4,
            "zstd" => {
                let level = match level {
                    None => DEFAULT_ZSTD_LEVEL,
                    Some(l) => l
                        .parse::<i32>()
                        .ok()
                        .filter(|l| (1..=22).contains(l))
                        .ok_or_else(|| {
                            Error::InvalidConfig(format!(
                                "bad zstd level '{l}' in '{s}' (expected 1 to 22)"
                            ))
                        })?,
                };
                return Ok(Compression::Zstd(level));
            }
            _ => return Err(bad()),
        };
        if level.is_some() {
            return Err(Error::InvalidConfig(format!(
                "compression '{name}' takes no level (only zstd does): '{s}'"
            )));
        }
        Ok(c)
    }
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Compression::None => f.write_str("none"),
            Compression::Snappy => f.write_str("snappy"),
            Compression::Lz4 => f.write_str("lz4"),
            Compression::Zstd(l) => write!(f, "zstd:{l}"),
        }
    }
}

impl Serialize for Compression {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn formats_from_extensions_and_magic() {
        assert_eq!(
            Format::for_output(Path::new("x.parquet")).unwrap(),
            Format::Parquet
        );
        for ok in ["x.arrow", "x.IPC", "dir/x.feather"] {
            assert_eq!(Format::for_output(Path::new(ok)).unwrap(), Format::Ipc);
            assert_eq!(Format::from_extension(Path::new(ok)), Some(Format::Ipc));
        }
        for bad in ["x.csv", "x", "x.parquet.tmp"] {
            let e = Format::for_output(Path::new(bad)).unwrap_err().to_string();
            assert!(e.contains(bad) && e.contains(".parquet"), "{e}");
            assert_eq!(Format::from_extension(Path::new(bad)), None);
        }
        assert_eq!(Format::from_head(b"PAR1\x15\x00"), Some(Format::Parquet));
        assert_eq!(Format::from_head(b"ARROW1\0\0"), Some(Format::Ipc));
        assert_eq!(Format::from_head(b"PAR"), None);
        assert_eq!(Format::from_tail(b"..PAR1"), Some(Format::Parquet));
        assert_eq!(Format::from_tail(b"..ARROW1"), Some(Format::Ipc));
        assert_eq!(Format::from_tail(b"ARROW1.."), None);
        let dir = tempfile::tempdir().unwrap();
        for (name, bytes, want) in [
            ("a.bin", &b"PAR1rest"[..], Some(Format::Parquet)),
            ("b.parquet", b"ARROW1\0\0rest", Some(Format::Ipc)),
            ("c.parquet", b"PA", None),
        ] {
            let p = dir.path().join(name);
            std::fs::write(&p, bytes).unwrap();
            match want {
                Some(f) => assert_eq!(Format::detect(&p).unwrap(), f, "{name}"),
                None => {
                    let e = Format::detect(&p).unwrap_err().to_string();
                    assert!(e.contains("c.parquet") && e.contains("magic"), "{e}");
                }
            }
        }
        let e = Format::detect(&dir.path().join("missing")).unwrap_err();
        assert!(matches!(e, Error::Store(_)), "{e}");
    }

    #[test]
    fn parses_codecs() {
        assert_eq!("none".parse::<Compression>().unwrap(), Compression::None);
        assert_eq!(
            "SNAPPY".parse::<Compression>().unwrap(),
            Compression::Snappy
        );
        assert_eq!("lz4".parse::<Compression>().unwrap(), Compression::Lz4);
        assert_eq!("zstd".parse::<Compression>().unwrap(), Compression::Zstd(1));
        assert_eq!(
            "zstd:9".parse::<Compression>().unwrap(),
            Compression::Zstd(9)
        );
        for bad in ["gzip", "zstd:0", "zstd:23", "zstd:x", "snappy:2", ""] {
            let e = bad.parse::<Compression>().unwrap_err().to_string();
            assert!(e.contains(bad) || bad.is_empty(), "{e}");
        }
        assert_eq!(Compression::Zstd(3).to_string(), "zstd:3");
    }

    #[test]
    fn parses_formats() {
        assert_eq!("parquet".parse::<Format>().unwrap(), Format::Parquet);
        assert_eq!("ipc".parse::<Format>().unwrap(), Format::Ipc);
        assert!("csv".parse::<Format>().is_err());
    }
}
