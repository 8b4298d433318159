//! A Delta log's replay: the table's state at a version, from its
//! newest checkpoint at or below that version and the JSON entries after
//! it.

use std::path::PathBuf;

use super::{
    checkpoint,
    log::{Format, LOG_DIR, LogLine, MetaData, Protocol, Snapshot, log_file_name},
};
use crate::{Error, dir::TableDir};

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

/// Lists the log directory of `table`; `None` when it does not exist.
pub(crate) fn list(table: &TableDir) -> Result<Option<Listing>, Error> {
    let Some(names) = table.list(LOG_DIR)? else {
        return Ok(None);
    };
    let mut listing = Listing::default();
    for name in &names {
        match version_of(name) {
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
pub fn replay(location: &TableDir, at: Option<u64>) -> Result<Option<Snapshot>, Error> {
    let log_dir = location.at(LOG_DIR);
    let Some(listing) = list(location)? else {
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
        let rel = format!("{LOG_DIR}/{}", checkpoint::file_name(c));
        let bytes = location
            .read(&rel)?
            .ok_or_else(|| bad(location.at(&rel), "the checkpoint is gone".into()))?;
        for line in checkpoint::read(bytes, &location.at(&rel))? {
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
        let lines = read_entry(location, v)?.ok_or_else(|| {
            bad(
                log_dir.join(log_file_name(v)),
                "the log entry is gone".into(),
            )
        })?;
        for line in lines {
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

/// The actions of the log entry of `version` of the table at
/// `location`, in their order; `None` when there is no such entry.
///
/// # Errors
/// [`Error::BadTable`] when the entry is not UTF-8 or a line is not a
/// Delta action; IO or store errors.
pub(crate) fn read_entry(location: &TableDir, version: u64) -> Result<Option<Vec<LogLine>>, Error> {
    let rel = format!("{LOG_DIR}/{}", log_file_name(version));
    let Some(bytes) = location.read(&rel)? else {
        return Ok(None);
    };
    let path = location.at(&rel);
    let bad = |reason: String| Error::BadTable {
        path: path.clone(),
        reason,
    };
    let text = String::from_utf8(bytes).map_err(|e| bad(format!("not a Delta log entry: {e}")))?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        out.push(
            serde_json::from_str(line)
                .map_err(|e| bad(format!("line {}: not a Delta log action: {e}", n + 1)))?,
        );
    }
    Ok(Some(out))
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
