//! Output format and codec choices, parsed from their command-line spelling.

use std::{fmt, str::FromStr};

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
    /// The file extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Parquet => "parquet",
            Format::Ipc => "arrow",
        }
    }
}

impl FromStr for Format {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        match s.to_ascii_lowercase().as_str() {
            "parquet" => Ok(Format::Parquet),
            "ipc" | "arrow" | "feather" => Ok(Format::Ipc),
            _ => Err(Error::InvalidConfig(format!(
                "unknown format '{s}' (expected parquet or ipc)"
            ))),
        }
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
    use super::*;

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
