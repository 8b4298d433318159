//! A Delta table's properties (`metaData.configuration`) that strata
//! writes or honours, and the table features they need.
//!
//! A new table takes any property outside the `delta.` namespace as
//! given; of Delta's own, only those strata honours:
//! [`CHANGE_DATA_FEED`] (the writer-only feature `changeDataFeed`:
//! writer version 4, or 7 naming it), [`APPEND_ONLY`] (`appendOnly`:
//! writer 2), [`DELETION_VECTORS`] (`deletionVectors`, which readers
//! need too: reader 3 and writer 7), [`CHECKPOINT_INTERVAL`], and the
//! retention durations
//! (`delta.logRetentionDuration`, `delta.deletedFileRetentionDuration`,
//! kept for other engines' clean-ups: strata removes no log entry and no
//! tombstone). A feature is active when the protocol supports it and its
//! property is `true` (any case), as the protocol defines it.

use std::collections::BTreeMap;

use super::log::{MetaData, Protocol};
use crate::Error;

/// `true` to record the change data feed: each change that rewrites
/// rows carries change data files.
pub const CHANGE_DATA_FEED: &str = "delta.enableChangeDataFeed";

/// `true` for a table whose data is never removed.
pub const APPEND_ONLY: &str = "delta.appendOnly";

/// `true` for a table whose deletes may mark rows deleted in a deletion
/// vector instead of rewriting their file.
pub const DELETION_VECTORS: &str = "delta.enableDeletionVectors";

/// How many commits apart checkpoints are (a positive integer).
pub const CHECKPOINT_INTERVAL: &str = "delta.checkpointInterval";

/// Delta properties kept as given, for other engines.
const KEPT: &[&str] = &[
    "delta.logRetentionDuration",
    "delta.deletedFileRetentionDuration",
];

/// Whether `value` is a boolean property's `true` (Delta reads them
/// without regard to case).
fn is_true(value: Option<&String>) -> bool {
    value.is_some_and(|v| v.eq_ignore_ascii_case("true"))
}

/// Checks the properties of a new table.
///
/// # Errors
/// [`Error::Unsupported`] for a `delta.` property strata does not honour,
/// a boolean property that is neither `true` nor `false`, or a
/// checkpoint interval that is not a positive integer.
pub fn check(configuration: &BTreeMap<String, String>) -> Result<(), Error> {
    for (key, value) in configuration {
        let bad = |what: &str| {
            Err(Error::Unsupported(format!(
                "table property `{key}` = `{value}`: {what}"
            )))
        };
        match key.as_str() {
            CHANGE_DATA_FEED | APPEND_ONLY | DELETION_VECTORS => {
                if !(value.eq_ignore_ascii_case("true") || value.eq_ignore_ascii_case("false")) {
                    return bad("not `true` or `false`");
                }
            }
            CHECKPOINT_INTERVAL => {
                if !value.parse::<u64>().is_ok_and(|n| n > 0) {
                    return bad("not a positive integer");
                }
            }
            k if KEPT.contains(&k) || !k.starts_with("delta.") => {}
            _ => {
                return bad(&format!(
                    "strata writes only the Delta properties {CHANGE_DATA_FEED}, {APPEND_ONLY}, \
                     {DELETION_VECTORS}, {CHECKPOINT_INTERVAL}, {}",
                    KEPT.join(", ")
                ));
            }
        }
    }
    Ok(())
}

/// The table features the properties of a new table need:
/// `changeDataFeed` when it records the change data feed, `appendOnly`
/// when it is append-only, `deletionVectors` when it takes deletion
/// vectors.
pub fn features(configuration: &BTreeMap<String, String>) -> Vec<&'static str> {
    let mut out = Vec::new();
    if is_true(configuration.get(DELETION_VECTORS)) {
        out.push("deletionVectors");
    }
    if is_true(configuration.get(CHANGE_DATA_FEED)) {
        out.push("changeDataFeed");
    }
    if is_true(configuration.get(APPEND_ONLY)) {
        out.push("appendOnly");
    }
    out
}

/// Whether a table records its change data feed: its protocol supports
/// `changeDataFeed` and `delta.enableChangeDataFeed` is `true`.
pub fn change_data_feed(protocol: &Protocol, meta: &MetaData) -> bool {
    protocol.supports("changeDataFeed") && is_true(meta.configuration.get(CHANGE_DATA_FEED))
}

/// Whether a table takes new deletion vectors: its protocol supports
/// `deletionVectors` and `delta.enableDeletionVectors` is `true`.
pub fn deletion_vectors(protocol: &Protocol, meta: &MetaData) -> bool {
    protocol.supports("deletionVectors") && is_true(meta.configuration.get(DELETION_VECTORS))
}

/// Whether a table is append-only: `delta.appendOnly` is `true` (at
/// writer version 7 also without the `appendOnly` feature: strata keeps
/// to the property either way).
pub fn append_only(meta: &MetaData) -> bool {
    is_true(meta.configuration.get(APPEND_ONLY))
}

/// Checks that `configuration` (properties a writer asks of a table that
/// exists) agrees with the table's: each key given has the table's value.
///
/// # Errors
/// [`Error::Unsupported`] naming the first property that differs.
pub fn check_same(
    table: &std::path::Path,
    meta: &MetaData,
    configuration: &BTreeMap<String, String>,
) -> Result<(), Error> {
    for (key, value) in configuration {
        let theirs = meta.configuration.get(key);
        let same = match key.as_str() {
            CHANGE_DATA_FEED | APPEND_ONLY | DELETION_VECTORS => {
                theirs.is_some_and(|t| t.eq_ignore_ascii_case(value))
            }
            _ => theirs == Some(value),
        };
        if !same {
            return Err(Error::Unsupported(format!(
                "{}: table property `{key}` is {} in the table; this commit asks for `{value}`",
                table.display(),
                theirs.map_or("not set".to_string(), |t| format!("`{t}`"))
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn only_honoured_delta_properties_are_taken() {
        let ok = map(&[
            (CHANGE_DATA_FEED, "TRUE"),
            (APPEND_ONLY, "false"),
            (DELETION_VECTORS, "true"),
            (CHECKPOINT_INTERVAL, "5"),
            ("delta.logRetentionDuration", "interval 30 days"),
            ("owner", "strata"),
        ]);
        check(&ok).unwrap();
        assert_eq!(features(&ok), ["deletionVectors", "changeDataFeed"]);
        let p = Protocol::for_features(&features(&ok));
        assert_eq!((p.min_reader_version, p.min_writer_version), (3, 7));
        assert_eq!(p.reader_features, Some(vec!["deletionVectors".to_string()]));
        for (k, v, want) in [
            (CHANGE_DATA_FEED, "yes", "not `true` or `false`"),
            (CHECKPOINT_INTERVAL, "0", "positive integer"),
            ("delta.columnMapping.mode", "name", "strata writes only"),
        ] {
            let e = check(&map(&[(k, v)])).unwrap_err().to_string();
            assert!(e.contains(k) && e.contains(want), "{e}");
        }
    }
}
