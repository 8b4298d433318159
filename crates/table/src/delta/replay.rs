//! A Delta log's replay: the table's state at a version, from its
//! newest checkpoint at or below that version and the JSON entries after
//! it.

use std::path::{Path, PathBuf};

use super::{
    checkpoint,
    log::{Format, LOG_DIR, LogLine, MetaData, Protocol, Snapshot, log_file_name},
};
use crate::Error;

/// What a log directory holds: the versions of its JSON entries and of
/// its single-file checkpoints, each ascending.
#[derive(Debug, Default)]
pub(crate) struct Listing {
    pub(crate) entries: Vec<u64>,
    pub(crate) checkpoints: Vec<u64>,
}

/// The 20-digit version a log file name starts with, and the rest.
fn version_of(name: &str) -> Option<(u64, &str)> {
    let digits = name.get(..20)?;
    digits
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| Some((digits.parse().ok()?, &name[20..])))?
}

/// Lists `log_dir`; `None` when it does not exist.
pub(crate) fn list(log_dir: &Path) -> Result<Option<Listing>, Error> {
    let read = match std::fs::read_dir(log_dir) {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io("list", log_dir, e)),
    };
    let mut listing = Listing::default();
    for entry in read.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        match version_of(&name) {
            Some((v, ".json")) => listing.entries.push(v),
            Some((v, ".checkpoint.parquet")) => listing.checkpoints.push(v),
            _ => {}
        }
    }
    listing.entries.sort_unstable();
    listing.checkpoints.sort_unstable();
    Ok(Some(listing))
}

/// The state of the Delta table at `location` at version `at` (its newest
/// when `None`), or `None` when there is no log.
///
/// # Errors
/// [`Error::BadTable`] when an entry or checkpoint does not read, a
/// version between the checkpoint and `at` is missing, or no action gives
/// the table's protocol and metaData.
pub fn replay(location: &Path, at: Option<u64>) -> Result<Option<Snapshot>, Error> {
    let log_dir = location.join(LOG_DIR);
    let Some(listing) = list(&log_dir)? else {
        return Ok(None);
    };
    let newest = listing
        .entries
        .iter()
        .chain(&listing.checkpoints)
        .copied()
        .max();
    let Some(newest) = newest else {
        return Ok(None);
    };
    let version = at.unwrap_or(newest);
    let bad = |path: PathBuf, reason: String| Error::BadTable { path, reason };
    let start = listing
        .checkpoints
        .iter()
        .rev()
        .find(|&&c| c <= version)
        .copied();
    let mut state = Snapshot {
        version,
        protocol: Protocol::for_features(&[]),
        meta: MetaData {
            id: String::new(),
            name: None,
            description: None,
            format: Format {
                provider: "parquet".into(),
                options: std::collections::BTreeMap::new(),
            },
            schema_string: String::new(),
            partition_columns: Vec::new(),
            configuration: std::collections::BTreeMap::new(),
            created_time: None,
        },
        files: std::collections::BTreeMap::new(),
        removed: std::collections::BTreeMap::new(),
        txns: std::collections::BTreeMap::new(),
        checkpoint: start,
        other_actions: Vec::new(),
    };
    let (mut seen_protocol, mut seen_meta) = (false, false);
    if let Some(c) = start {
        let path = log_dir.join(checkpoint::file_name(c));
        for line in checkpoint::read(&path)? {
            seen_protocol |= line.protocol.is_some();
            seen_meta |= line.meta_data.is_some();
            state.apply(line);
        }
    }
    let first = start.map_or(0, |c| c + 1);
    for v in first..=version {
        if listing.entries.binary_search(&v).is_err() {
            return Err(bad(
                log_dir.join(log_file_name(v)),
                format!(
                    "the log has no entry for version {v} (it has {} entries{})",
                    listing.entries.len(),
                    start.map_or(String::new(), |c| format!(" and a checkpoint at {c}"))
                ),
            ));
        }
        let path = log_dir.join(log_file_name(v));
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io("read", &path, e))?;
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let line: LogLine = serde_json::from_str(line).map_err(|e| {
                bad(
                    path.clone(),
                    format!("line {}: not a Delta log action: {e}", n + 1),
                )
            })?;
            seen_protocol |= line.protocol.is_some();
            seen_meta |= line.meta_data.is_some();
            state.apply(line);
        }
    }
    if !(seen_protocol && seen_meta) {
        return Err(bad(
            log_dir,
            format!(
                "no action up to version {version} gives the table's {}",
                if seen_meta { "protocol" } else { "metaData" }
            ),
        ));
    }
    Ok(Some(state))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_names_parse_and_others_are_ignored() {
        assert_eq!(version_of(&log_file_name(12)), Some((12, ".json")));
        assert_eq!(
            version_of("00000000000000000010.checkpoint.parquet"),
            Some((10, ".checkpoint.parquet"))
        );
        assert_eq!(version_of("_last_checkpoint"), None);
        assert_eq!(version_of("0000000000000000001x.json"), None);
        assert_eq!(version_of("short.json"), None);
    }
}
