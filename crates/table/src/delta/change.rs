//! A change to a Delta table that exists: data files added, live ones
//! removed, change data files recorded, under one operation, committed
//! as the table's next version by optimistic concurrency.
//!
//! A [`Change`] names the version it read ([`Change::read_version`]):
//! the files it removes must be live there. Its entry holds a
//! `commitInfo` (the operation and its parameters, `readVersion`, the
//! isolation level, `isBlindAppend`, counts of files, bytes and rows),
//! an `add` per new file (its partition values from its directories,
//! size, modification time and statistics), a `remove` per file that
//! leaves (`deletionTimestamp`, `extendedFileMetadata` with the partition
//! values and size its `add` had, and its statistics) and a `cdc` per
//! change data file. `dataChange` is the change's on every `add` and
//! `remove` (false for compaction's rewrite, which keeps the rows).
//!
//! On a table that takes deletion vectors
//! ([`properties::deletion_vectors`]), a change may also mark rows of
//! live files deleted ([`Change::deleted_rows`]) instead of rewriting
//! them: each such file's vector (the rows it had, and these) is written
//! to a new deletion vector file ([`super::dv`]) once every check has
//! passed, and the entry removes the logical file (its path and old
//! vector) and adds it back with the new one, its statistics marked
//! `tightBounds` false. A change that then conflicts leaves that file
//! unreferenced, as it leaves the data files its caller wrote, for
//! [`crate::clean`] to remove.
//!
//! # Conflicts
//!
//! The entry is claimed at `read_version + 1` only if absent. When
//! another writer committed that version first, the versions it and
//! others committed since are read, in order, and the change aborts
//! with [`Error::Conflict`] (nothing written, the table as the others
//! left it) when one of them
//!
//! * changed the protocol or the metadata (schema, partitioning,
//!   properties),
//! * removed a file this change removes or read ([`Change::also_read`]):
//!   the rows it rewrote are gone or rewritten already (two deletes, two
//!   compactions or a delete and a compaction of the same file; a file
//!   whose rows it marks deleted counts as removed), or
//! * added a file or change data file at a path this change adds;
//!
//! otherwise (they appended files, or rewrote other files) the change is
//! claimed again on top of the newest version, up to
//! [`COMMIT_RETRIES`] times. This is Delta's `WriteSerializable`
//! isolation for a change whose reads are files, not predicates: the
//! change is taken to have read exactly the files it removes and those
//! of `also_read` (a predicate's scan that found nothing to rewrite in
//! them), so rows a concurrent writer added elsewhere are not rows the
//! change should have seen, and a blind append never conflicts. A
//! change that does not change data (compaction) is recorded as
//! `SnapshotIsolation`, as Delta's `OPTIMIZE` is.
//!
//! # Change data feed
//!
//! On a table that records its change data feed
//! ([`properties::change_data_feed`]), a change that rewrites rows
//! (changes data, removes files and adds files) must carry change data
//! files ([`super::cdc`]): without them readers would read every row of
//! the removed files as deleted and every row of the added ones as
//! inserted. A change that only adds files, or only removes whole files,
//! may carry none (readers take its `add`s as inserts and its `remove`s
//! as deletes); rows marked deleted in deletion vectors count as a
//! rewrite. A table that does not record it takes no change data files.

use std::collections::{BTreeMap, BTreeSet};

use super::{
    cdc::{CHANGE_DATA_DIR, CdcFile},
    commit::{self, Action, COMMIT_RETRIES, CommitInfo, Committed},
    dv,
    log::{Add, Cdc, LOG_DIR, LogLine, Remove, Snapshot},
    properties,
    replay::{list, read_entry, replay},
    schema::TableSchema,
    values,
};
use crate::{Error, dir::TableDir, ids::now_ms, stats::FileFacts};

/// What a change does, as its `commitInfo` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Operation {
    /// `WRITE`: new data files (mode `Append`), or all the table's files
    /// replaced (mode `Overwrite`, when the change removes files).
    Write,
    /// `DELETE` of the rows matching `predicate` (SQL text, recorded as
    /// given): files rewritten without them, or removed whole.
    Delete {
        /// The rows' condition; `None` for all rows.
        predicate: Option<String>,
    },
    /// `UPDATE` of the rows matching `predicate`: files rewritten with
    /// the new values.
    Update {
        /// The rows' condition; `None` for all rows.
        predicate: Option<String>,
    },
    /// `MERGE` of a source into the table on `predicate`.
    Merge {
        /// The join condition.
        predicate: String,
        /// What matched rows got, one action type per clause (`update`,
        /// `delete`).
        matched: Vec<String>,
        /// What unmatched source rows got (`insert`).
        not_matched: Vec<String>,
        /// What table rows no source row matched got (`update`,
        /// `delete`).
        not_matched_by_source: Vec<String>,
    },
    /// `OPTIMIZE`: files compacted into fewer, the rows unchanged (a
    /// change with `data_change` false).
    Optimize,
}

impl Operation {
    /// Its name in `commitInfo.operation`.
    pub fn name(&self) -> &'static str {
        match self {
            Operation::Write => "WRITE",
            Operation::Delete { .. } => "DELETE",
            Operation::Update { .. } => "UPDATE",
            Operation::Merge { .. } => "MERGE",
            Operation::Optimize => "OPTIMIZE",
        }
    }

    /// Its `operationParameters`, each value as text as Delta's writers
    /// keep them (lists as JSON arrays in a string).
    fn parameters(&self, partition: &[String], removes: bool) -> BTreeMap<&'static str, String> {
        let list = |items: &[String]| serde_json::Value::from(items.to_vec()).to_string();
        let predicate = |p: &Option<String>| list(p.as_slice());
        let clauses = |actions: &[String]| {
            serde_json::Value::from(
                actions
                    .iter()
                    .map(|a| serde_json::json!({ "actionType": a }))
                    .collect::<Vec<_>>(),
            )
            .to_string()
        };
        match self {
            Operation::Write => BTreeMap::from([
                (
                    "mode",
                    if removes { "Overwrite" } else { "Append" }.to_string(),
                ),
                ("partitionBy", list(partition)),
            ]),
            Operation::Delete { predicate: p } | Operation::Update { predicate: p } => {
                BTreeMap::from([("predicate", predicate(p))])
            }
            Operation::Merge {
                predicate: p,
                matched,
                not_matched,
                not_matched_by_source,
            } => BTreeMap::from([
                ("predicate", list(std::slice::from_ref(p))),
                ("matchedPredicates", clauses(matched)),
                ("notMatchedPredicates", clauses(not_matched)),
                (
                    "notMatchedBySourcePredicates",
                    clauses(not_matched_by_source),
                ),
            ]),
            Operation::Optimize => BTreeMap::from([
                ("predicate", "[]".to_string()),
                ("zOrderBy", "[]".to_string()),
            ]),
        }
    }
}

/// Rows a change marks deleted in a live data file's deletion vector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeletedRows {
    /// The file's path relative to the table.
    pub path: String,
    /// The rows' indexes in the file, from 0 (not already deleted).
    pub rows: Vec<u64>,
}

/// A change to the Delta table at `location`.
#[derive(Debug, Clone)]
pub struct Change<'a> {
    /// The table's root: a local directory or an object-store prefix.
    pub location: &'a TableDir,
    /// The version the change read: the files it removes are live there,
    /// and versions after it are checked for conflicts.
    pub read_version: u64,
    /// What it does.
    pub operation: Operation,
    /// Data files written for it: each one's path relative to
    /// `location` (`/` separated, partition directories included) and
    /// its facts. New paths only.
    pub added: &'a [(String, FileFacts)],
    /// Live data files it removes, by path relative to `location`.
    pub removed: &'a [String],
    /// False when it only rearranges rows (compaction): its `add`s and
    /// `remove`s say `dataChange` false, and the rows removed must be
    /// the rows added.
    pub data_change: bool,
    /// Change data files written for it ([`super::cdc`]).
    pub change_files: &'a [CdcFile],
    /// Live data files it read without removing them (a predicate's scan
    /// that found nothing to change there): another writer's removal of
    /// one is a conflict too.
    pub also_read: &'a [String],
    /// Rows it marks deleted in live files' deletion vectors (a table
    /// that takes them only): the files stay, without those rows.
    pub deleted_rows: &'a [DeletedRows],
}

/// A change's actions, the same whatever version they land in.
struct Planned {
    adds: Vec<Add>,
    removes: Vec<Remove>,
    cdcs: Vec<Cdc>,
    /// Rows added.
    rows: u64,
    /// Counts for `commitInfo.operationMetrics`.
    metrics: BTreeMap<&'static str, String>,
    /// Paths (decoded) whose removal by another writer is a conflict.
    read: BTreeSet<String>,
    /// Paths (decoded) whose addition by another writer is a conflict.
    written: BTreeSet<String>,
}

/// Commits `c` as the table's next version: on top of its read version,
/// or of versions other writers committed since when none of them
/// conflicts (see the [module docs](self)); then writes the checkpoint
/// when the version is due one.
///
/// # Errors
/// [`Error::BadTable`] when there is no table at `location`, its log
/// does not read (or has no entry of `read_version`), a removed or read
/// file is not live at `read_version`, or an added file's path lacks its
/// partition directories; [`Error::Unsupported`] for a table strata does
/// not write, an empty change, the same path twice, an added path the
/// table has or had, change data files outside `_change_data/` or on a
/// table that does not record its change data feed, a rewrite without
/// them on one that does, data removed from an append-only table, or a
/// change without `data_change` whose rows differ or that has change
/// data files; [`Error::Conflict`] when a version another writer
/// committed conflicts, or after [`COMMIT_RETRIES`] versions taken by
/// others; IO or store errors, a missing file too.
pub fn commit_change(c: &Change<'_>) -> Result<Committed, Error> {
    let root = c.location.root();
    let no_table = || Error::BadTable {
        path: root.clone(),
        reason: "holds no Delta table".into(),
    };
    let listing = list(c.location)?.ok_or_else(no_table)?;
    let newest = listing.entries.iter().chain(&listing.checkpoints).max();
    if newest.is_none_or(|&n| n < c.read_version) {
        return Err(Error::BadTable {
            path: root,
            reason: format!(
                "the Delta table has no version {} (its newest is {})",
                c.read_version,
                newest.map_or("none".into(), u64::to_string)
            ),
        });
    }
    let base = replay(c.location, Some(c.read_version))?.ok_or_else(no_table)?;
    base.protocol.check_writable(&root, &base.meta)?;
    let planned = plan(c, &base)?;
    let mut version = c.read_version + 1;
    let mut attempts = 0;
    let log_file = loop {
        let mut lines = vec![Action::CommitInfo(CommitInfo {
            timestamp: now_ms(),
            operation: c.operation.name(),
            operation_parameters: c
                .operation
                .parameters(&base.meta.partition_columns, !c.removed.is_empty()),
            read_version: Some(c.read_version),
            isolation_level: Some(if c.data_change {
                "WriteSerializable"
            } else {
                "SnapshotIsolation"
            }),
            is_blind_append: c.operation == Operation::Write && c.removed.is_empty(),
            operation_metrics: planned.metrics.clone(),
            engine_info: commit::ENGINE,
        })];
        lines.extend(planned.removes.iter().map(Action::Remove));
        lines.extend(planned.adds.iter().map(Action::Add));
        lines.extend(planned.cdcs.iter().map(Action::Cdc));
        let body = commit::encode(c.location, &lines)?;
        if let Some(path) = commit::claim(c.location, version, &body)? {
            break path;
        }
        // Others committed from `version` on: each of their versions is
        // checked, then the change goes on top of the newest.
        let mut next = version;
        while let Some(winning) = read_entry(c.location, next)? {
            check_conflicts(&root, next, &winning, &planned)?;
            next += 1;
        }
        if attempts >= COMMIT_RETRIES {
            return Err(Error::Conflict {
                path: root,
                version: next,
            });
        }
        attempts += 1;
        version = next;
    };
    let (checkpoint, checkpoint_error) =
        commit::checkpoint_when_due(c.location, version, &base.meta);
    Ok(Committed {
        log_file,
        version,
        table_id: base.meta.id.clone(),
        files: planned.adds.len(),
        rows: planned.rows,
        removed: planned.removes.len(),
        change_files: planned.cdcs.len(),
        checkpoint,
        checkpoint_error,
    })
}

/// [`Error::Conflict`] when the version `version` another writer
/// committed (its actions `winning`) conflicts with `planned`.
fn check_conflicts(
    root: &std::path::Path,
    version: u64,
    winning: &[LogLine],
    planned: &Planned,
) -> Result<(), Error> {
    let touched = |uri: &str, set: &BTreeSet<String>| {
        values::path_from_uri(uri).is_some_and(|p| set.contains(&p))
    };
    let conflict = winning.iter().any(|line| {
        line.protocol.is_some()
            || line.meta_data.is_some()
            || line
                .remove
                .as_ref()
                .is_some_and(|r| touched(&r.path, &planned.read))
            || line
                .add
                .as_ref()
                .is_some_and(|a| touched(&a.path, &planned.written))
            || line
                .cdc
                .as_ref()
                .is_some_and(|x| touched(&x.path, &planned.written))
    });
    if conflict {
        return Err(Error::Conflict {
            path: root.to_path_buf(),
            version,
        });
    }
    Ok(())
}

/// Checks `c` against the table's state at its read version `base` and
/// builds its actions.
fn plan(c: &Change<'_>, base: &Snapshot) -> Result<Planned, Error> {
    let unsupported = |what: String| {
        Err(Error::Unsupported(format!(
            "{}: {} at version {}: {what}",
            c.location.root().display(),
            c.operation.name(),
            c.read_version
        )))
    };
    if c.added.is_empty()
        && c.removed.is_empty()
        && c.change_files.is_empty()
        && c.deleted_rows.is_empty()
    {
        return unsupported("the change adds and removes no file".into());
    }
    let mut seen = BTreeSet::new();
    for path in c
        .added
        .iter()
        .map(|(p, _)| p)
        .chain(c.removed)
        .chain(c.change_files.iter().map(|f| &f.path))
        .chain(c.deleted_rows.iter().map(|d| &d.path))
    {
        if !seen.insert(path.as_str()) {
            return unsupported(format!("`{path}` is named twice"));
        }
    }
    // The table's files by decoded path, whatever URI escapes their
    // actions use.
    let live: BTreeMap<String, &Add> = base
        .files
        .values()
        .filter_map(|a| Some((values::path_from_uri(&a.path)?, a)))
        .collect();
    let gone: BTreeSet<String> = base
        .removed
        .keys()
        .filter_map(|p| values::path_from_uri(p))
        .collect();
    let not_live = |rel: &str| Error::BadTable {
        path: c.location.at(rel),
        reason: format!(
            "not a live data file of the Delta table at version {}: {}",
            c.read_version,
            if gone.contains(rel) {
                "an earlier version removed it"
            } else {
                "no version added it"
            }
        ),
    };
    let now = now_ms();
    let mut removes = Vec::with_capacity(c.removed.len());
    let mut removed_rows = Some(0u64);
    let mut removed_bytes = 0i64;
    for rel in c.removed {
        let add = live.get(rel.as_str()).ok_or_else(|| not_live(rel))?;
        removed_rows = removed_rows.zip(add.rows()).map(|(a, b)| a + b);
        removed_bytes = removed_bytes.saturating_add(add.size);
        removes.push(Remove {
            path: add.path.clone(),
            deletion_timestamp: Some(now),
            data_change: c.data_change,
            extended_file_metadata: Some(true),
            partition_values: Some(add.partition_values.clone()),
            size: Some(add.size),
            stats: add.stats.clone(),
            deletion_vector: add.deletion_vector.clone(),
        });
    }
    for rel in c.also_read {
        if !live.contains_key(rel.as_str()) {
            return Err(not_live(rel));
        }
    }
    let schema = TableSchema::from_json(&base.meta.schema_string)?;
    let typed = schema.partition_types(&base.meta.partition_columns)?;
    let mut adds = Vec::with_capacity(c.added.len());
    let mut rows = 0u64;
    for (rel, facts) in c.added {
        if rel.starts_with(&format!("{LOG_DIR}/"))
            || rel.starts_with(&format!("{CHANGE_DATA_DIR}/"))
        {
            return unsupported(format!(
                "`{rel}` is under `{LOG_DIR}/` or `{CHANGE_DATA_DIR}/`, not a data file's place"
            ));
        }
        if live.contains_key(rel.as_str()) || gone.contains(rel.as_str()) {
            return unsupported(format!(
                "`{rel}` is a data file of the table at this or an earlier version: a change \
                 writes new files"
            ));
        }
        adds.push(commit::add_action(
            c.location,
            rel,
            facts,
            &schema,
            &typed,
            c.data_change,
        )?);
        rows += facts.rows;
    }
    let mut cdcs = Vec::with_capacity(c.change_files.len());
    for f in c.change_files {
        let under = f
            .path
            .strip_prefix(CHANGE_DATA_DIR)
            .is_some_and(|r| r.starts_with('/') && r.len() > 1);
        if !under {
            return unsupported(format!(
                "change data file `{}` is not under `{CHANGE_DATA_DIR}/`",
                f.path
            ));
        }
        // It must be there: readers of the change data feed read it.
        c.location.modified_ms(&f.path)?;
        cdcs.push(Cdc {
            path: values::path_uri(&f.path),
            partition_values: values::partition_values(&f.path, &typed)?,
            size: i64::try_from(f.size).unwrap_or(i64::MAX),
            data_change: false,
        });
    }
    let marked = mark_deleted(c, base, &live, now)?;
    let cdf = properties::change_data_feed(&base.protocol, &base.meta);
    if !cdcs.is_empty() && !cdf {
        return unsupported(format!(
            "the table does not record its change data feed ({} is not `true`, or the protocol \
             lacks changeDataFeed), so it takes no change data files",
            properties::CHANGE_DATA_FEED
        ));
    }
    if c.data_change {
        if !removes.is_empty() && properties::append_only(&base.meta) {
            return unsupported(format!(
                "the table is append-only ({} is `true`): no change removes its data",
                properties::APPEND_ONLY
            ));
        }
        if !marked.removes.is_empty() && properties::append_only(&base.meta) {
            return unsupported(format!(
                "the table is append-only ({} is `true`): no change deletes its rows",
                properties::APPEND_ONLY
            ));
        }
        let rewrites = !removes.is_empty() && !adds.is_empty() || !marked.removes.is_empty();
        if cdf && rewrites && cdcs.is_empty() {
            return unsupported(format!(
                "the table records its change data feed ({}), and a change that rewrites files \
                 carries change data files with the rows it changed",
                properties::CHANGE_DATA_FEED
            ));
        }
    } else {
        if !marked.removes.is_empty() {
            return unsupported(
                "a change that does not change data (data_change false) marks no rows deleted"
                    .into(),
            );
        }
        if !cdcs.is_empty() {
            return unsupported(
                "a change that does not change data (data_change false) has no change data".into(),
            );
        }
        if removes.is_empty() {
            return unsupported(
                "a change that does not change data (data_change false) removes the files whose \
                 rows it adds"
                    .into(),
            );
        }
        if let Some(before) = removed_rows.filter(|&r| r != rows) {
            return unsupported(format!(
                "a change that does not change data (data_change false) keeps the rows: it \
                 removes {before} and adds {rows}"
            ));
        }
    }
    let added_bytes = c.added.iter().map(|(_, f)| f.bytes).sum::<u64>();
    let mut metrics = BTreeMap::from([
        ("numAddedFiles", adds.len().to_string()),
        ("numRemovedFiles", removes.len().to_string()),
        ("numAddedBytes", added_bytes.to_string()),
        ("numRemovedBytes", removed_bytes.to_string()),
        ("numOutputRows", rows.to_string()),
    ]);
    if !cdcs.is_empty() {
        metrics.insert("numAddedChangeFiles", cdcs.len().to_string());
    }
    if !marked.removes.is_empty() {
        metrics.insert("numDeletionVectorsAdded", marked.adds.len().to_string());
        metrics.insert("numDeletionVectorsRemoved", marked.replaced.to_string());
    }
    if let (Operation::Delete { .. }, Some(before)) = (&c.operation, removed_rows) {
        metrics.insert(
            "numDeletedRows",
            (before.saturating_sub(rows) + marked.rows).to_string(),
        );
        metrics.insert("numCopiedRows", rows.to_string());
    }
    let read = c
        .removed
        .iter()
        .chain(c.also_read)
        .chain(c.deleted_rows.iter().map(|d| &d.path))
        .cloned()
        .collect();
    // The vectors are data: written once every check has passed, before
    // the commit names them.
    if !marked.vectors.is_empty() {
        let written = dv::write(c.location, &marked.vectors)?;
        for (mut add, vector) in marked.adds.into_iter().zip(written) {
            add.deletion_vector = Some(vector);
            adds.push(add);
        }
        removes.extend(marked.removes);
    }
    let written = c
        .added
        .iter()
        .map(|(p, _)| p)
        .chain(c.change_files.iter().map(|f| &f.path))
        .cloned()
        .collect();
    Ok(Planned {
        adds,
        removes,
        cdcs,
        rows,
        metrics,
        read,
        written,
    })
}

/// What [`Change::deleted_rows`] makes of the files it names: each
/// one's `remove` (with its old vector) and `add` (its vector to come),
/// and the vectors to write.
#[derive(Default)]
struct Marked {
    removes: Vec<Remove>,
    adds: Vec<Add>,
    vectors: Vec<Vec<u64>>,
    /// Old vectors replaced.
    replaced: usize,
    /// Rows newly marked deleted.
    rows: u64,
}

/// Checks `c`'s deleted rows against the live files `live` of `base` (a
/// table that takes deletion vectors, rows within each file and not yet
/// deleted) and builds their actions.
fn mark_deleted(
    c: &Change<'_>,
    base: &Snapshot,
    live: &BTreeMap<String, &Add>,
    now: i64,
) -> Result<Marked, Error> {
    let mut out = Marked::default();
    if c.deleted_rows.is_empty() {
        return Ok(out);
    }
    let refuse = |what: String| {
        Error::Unsupported(format!(
            "{}: {} at version {}: {what}",
            c.location.root().display(),
            c.operation.name(),
            c.read_version
        ))
    };
    if !properties::deletion_vectors(&base.protocol, &base.meta) {
        return Err(refuse(format!(
            "the table takes no deletion vectors ({} is not `true`, or the protocol lacks \
             deletionVectors)",
            properties::DELETION_VECTORS
        )));
    }
    for d in c.deleted_rows {
        let add = *live.get(d.path.as_str()).ok_or_else(|| Error::BadTable {
            path: c.location.at(&d.path),
            reason: format!(
                "not a live data file of the Delta table at version {}",
                c.read_version
            ),
        })?;
        let stats: Option<serde_json::Value> = add
            .stats
            .as_deref()
            .and_then(|s| serde_json::from_str(s).ok());
        let Some(limit) = stats.as_ref().and_then(|s| s["numRecords"].as_u64()) else {
            return Err(refuse(format!(
                "`{}` has no numRecords in its statistics, which a deletion vector needs",
                d.path
            )));
        };
        let mut new = d.rows.clone();
        new.sort_unstable();
        new.dedup();
        if new.is_empty() || new.len() != d.rows.len() {
            return Err(refuse(format!(
                "`{}`: rows to delete are given, each once",
                d.path
            )));
        }
        if let Some(&past) = new.iter().find(|&&r| r >= limit) {
            return Err(refuse(format!(
                "`{}` has {limit} rows: row {past} is not one of them",
                d.path
            )));
        }
        let old = match &add.deletion_vector {
            Some(v) => dv::read(c.location, v, limit)?,
            None => Vec::new(),
        };
        let all = dv::merge(&old, &new)
            .ok_or_else(|| refuse(format!("`{}`: a row to delete is deleted already", d.path)))?;
        out.replaced += usize::from(add.deletion_vector.is_some());
        out.rows += new.len() as u64;
        out.removes.push(Remove {
            path: add.path.clone(),
            deletion_timestamp: Some(now),
            data_change: true,
            extended_file_metadata: Some(true),
            partition_values: Some(add.partition_values.clone()),
            size: Some(add.size),
            stats: add.stats.clone(),
            deletion_vector: add.deletion_vector.clone(),
        });
        out.adds.push(Add {
            data_change: true,
            stats: add.stats.as_deref().map(wide_bounds),
            deletion_vector: None,
            ..(*add).clone()
        });
        out.vectors.push(all);
    }
    Ok(out)
}

/// Statistics `stats` (a JSON object) with `"tightBounds":false`: once
/// rows are marked deleted, the bounds may be of rows that are gone.
fn wide_bounds(stats: &str) -> String {
    if stats.contains("\"tightBounds\":") {
        return stats.replace("\"tightBounds\":true", "\"tightBounds\":false");
    }
    match stats.strip_prefix('{') {
        Some(rest) if rest.trim_start().starts_with('}') => "{\"tightBounds\":false}".into(),
        Some(rest) => format!("{{\"tightBounds\":false,{rest}"),
        None => stats.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use arrow_schema::{DataType, Field, Schema};
    use serde_json::Value;

    use super::*;
    use crate::{
        delta::{NewTable, create, create_with, log_file_name},
        stats::{Bound, LeafFacts},
    };

    /// The facts of a file of ids `lo..=hi`.
    fn facts(lo: i64, hi: i64) -> FileFacts {
        FileFacts {
            rows: (hi - lo + 1) as u64,
            bytes: 100,
            split_offsets: vec![4],
            leaves: vec![LeafFacts {
                path: vec!["id".into()],
                field_id: None,
                repeated: false,
                compressed_bytes: 50,
                values: (hi - lo + 1) as u64,
                nulls: Some(0),
                min: Some(Bound::Int(lo)),
                max: Some(Bound::Int(hi)),
            }],
        }
    }

    /// Files at `root` (their bytes are not read), with their facts.
    fn files(root: &std::path::Path, list: &[(&str, i64, i64)]) -> Vec<(String, FileFacts)> {
        list.iter()
            .map(|(rel, lo, hi)| {
                let path = root.join(rel);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, b"not read").unwrap();
                (rel.to_string(), facts(*lo, *hi))
            })
            .collect()
    }

    /// A table of ids 1 to 6 in `a`, `b`, `c` (two each) at version 0,
    /// with the given properties.
    fn table(root: &std::path::Path, properties: &[(&str, &str)]) -> TableDir {
        let location = TableDir::local(root).unwrap();
        let schema =
            TableSchema::new(&Schema::new(vec![Field::new("id", DataType::Int64, false)])).unwrap();
        let files = files(
            root,
            &[
                ("a.parquet", 1, 2),
                ("b.parquet", 3, 4),
                ("c.parquet", 5, 6),
            ],
        );
        let configuration = properties
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let c = create_with(
            &NewTable {
                location: &location,
                schema: &schema,
                partition: &[],
                files: &files,
            },
            &configuration,
        )
        .unwrap();
        assert_eq!(c.version, 0);
        location
    }

    fn delete<'a>(
        location: &'a TableDir,
        read_version: u64,
        added: &'a [(String, FileFacts)],
        removed: &'a [String],
        change_files: &'a [CdcFile],
    ) -> Change<'a> {
        Change {
            location,
            read_version,
            operation: Operation::Delete {
                predicate: Some("id = 1".into()),
            },
            added,
            removed,
            data_change: true,
            change_files,
            also_read: &[],
            deleted_rows: &[],
        }
    }

    fn lines(path: &std::path::Path) -> Vec<Value> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn log_names(root: &std::path::Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(root.join(LOG_DIR))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_delete_commits_its_removes_adds_and_change_data() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let location = table(root, &[(properties::CHANGE_DATA_FEED, "true")]);
        let v0 = lines(&root.join(LOG_DIR).join(log_file_name(0)));
        assert_eq!(
            v0[1]["protocol"],
            serde_json::json!({"minReaderVersion": 1, "minWriterVersion": 4})
        );
        assert_eq!(
            v0[2]["metaData"]["configuration"],
            serde_json::json!({"delta.enableChangeDataFeed": "true"})
        );
        let added = files(root, &[("a-1.parquet", 2, 2)]);
        files(root, &[("_change_data/cdc-1.parquet", 0, 0)]);
        let cdc = [CdcFile {
            path: "_change_data/cdc-1.parquet".into(),
            size: 8,
        }];
        let removed = ["a.parquet".to_string()];
        let c = commit_change(&delete(&location, 0, &added, &removed, &cdc)).unwrap();
        assert_eq!(
            (c.version, c.files, c.rows, c.removed, c.change_files),
            (1, 1, 1, 1, 1)
        );
        let l = lines(&c.log_file);
        assert_eq!(l.len(), 4);
        let info = &l[0]["commitInfo"];
        assert_eq!(info["operation"], "DELETE");
        assert_eq!(info["operationParameters"]["predicate"], r#"["id = 1"]"#);
        assert_eq!(info["readVersion"], 0);
        assert_eq!(info["isolationLevel"], "WriteSerializable");
        assert_eq!(info["isBlindAppend"], false);
        let m = &info["operationMetrics"];
        assert_eq!(
            (
                &m["numDeletedRows"],
                &m["numCopiedRows"],
                &m["numAddedChangeFiles"]
            ),
            (&Value::from("1"), &Value::from("1"), &Value::from("1"))
        );
        let remove = &l[1]["remove"];
        assert_eq!(remove["path"], "a.parquet");
        assert_eq!(remove["dataChange"], true);
        assert_eq!(remove["extendedFileMetadata"], true);
        assert_eq!(remove["partitionValues"], serde_json::json!({}));
        assert_eq!(remove["size"], 100);
        assert!(remove["deletionTimestamp"].as_i64().unwrap() > 0);
        assert!(
            remove["stats"]
                .as_str()
                .unwrap()
                .starts_with(r#"{"numRecords":2,"#)
        );
        assert_eq!(l[2]["add"]["path"], "a-1.parquet");
        assert_eq!(l[2]["add"]["dataChange"], true);
        assert_eq!(
            l[3]["cdc"],
            serde_json::json!({
                "path": "_change_data/cdc-1.parquet",
                "partitionValues": {},
                "size": 8,
                "dataChange": false
            })
        );
        let state = replay(&location, None).unwrap().unwrap();
        assert_eq!(
            state.files.keys().collect::<Vec<_>>(),
            ["a-1.parquet", "b.parquet", "c.parquet"]
        );
        assert!(state.removed.contains_key("a.parquet"));
        assert!(state.other_actions.is_empty());
        assert_eq!(state.rows(), 5);
    }

    #[test]
    fn compaction_keeps_the_rows_and_changes_no_data() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let location = table(root, &[(properties::CHANGE_DATA_FEED, "true")]);
        let added = files(root, &[("ab.parquet", 1, 4)]);
        let removed = ["a.parquet".to_string(), "b.parquet".to_string()];
        let optimize = Change {
            location: &location,
            read_version: 0,
            operation: Operation::Optimize,
            added: &added,
            removed: &removed,
            data_change: false,
            change_files: &[],
            also_read: &[],
            deleted_rows: &[],
        };
        let c = commit_change(&optimize).unwrap();
        let l = lines(&c.log_file);
        assert_eq!(l[0]["commitInfo"]["operation"], "OPTIMIZE");
        assert_eq!(l[0]["commitInfo"]["isolationLevel"], "SnapshotIsolation");
        assert!(l[1..].iter().all(|a| {
            let action = a.get("add").or_else(|| a.get("remove")).unwrap();
            action["dataChange"] == false
        }));
        // Rows that differ are refused.
        let fewer = files(root, &[("c-1.parquet", 5, 5)]);
        let e = commit_change(&Change {
            read_version: 1,
            added: &fewer,
            removed: &["c.parquet".to_string()],
            ..optimize.clone()
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("removes 2 and adds 1"), "{e}");
    }

    #[test]
    fn a_conflicting_change_aborts_and_leaves_the_winner() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let location = table(root, &[]);
        let removed = ["a.parquet".to_string()];
        let first = files(root, &[("a-1.parquet", 2, 2)]);
        let second = files(root, &[("a-2.parquet", 1, 1)]);
        // Both read version 0 and rewrite `a`: the second aborts.
        commit_change(&delete(&location, 0, &first, &removed, &[])).unwrap();
        let e = commit_change(&delete(&location, 0, &second, &removed, &[])).unwrap_err();
        assert!(matches!(e, Error::Conflict { version: 1, .. }), "{e}");
        assert_eq!(log_names(root), [log_file_name(0), log_file_name(1)]);
        let state = replay(&location, None).unwrap().unwrap();
        assert!(state.files.contains_key("a-1.parquet"));
        assert!(!state.files.contains_key("a-2.parquet"));

        // A file the change only read, rewritten by another: a conflict.
        let c2 = files(root, &[("c-1.parquet", 5, 5)]);
        commit_change(&delete(&location, 1, &c2, &["c.parquet".to_string()], &[])).unwrap();
        let b2 = files(root, &[("b-1.parquet", 3, 3)]);
        let read = ["c.parquet".to_string()];
        let e = commit_change(&Change {
            also_read: &read,
            ..delete(&location, 1, &b2, &["b.parquet".to_string()], &[])
        })
        .unwrap_err();
        assert!(matches!(e, Error::Conflict { version: 2, .. }), "{e}");

        // Another writer's metadata: a conflict.
        let meta = lines(&root.join(LOG_DIR).join(log_file_name(0)))[2].to_string();
        std::fs::write(root.join(LOG_DIR).join(log_file_name(3)), meta + "\n").unwrap();
        let e =
            commit_change(&delete(&location, 2, &b2, &["b.parquet".to_string()], &[])).unwrap_err();
        assert!(matches!(e, Error::Conflict { version: 3, .. }), "{e}");
        assert_eq!(replay(&location, None).unwrap().unwrap().version, 3);
    }

    #[test]
    fn a_change_goes_on_top_of_blind_appends() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let location = table(root, &[]);
        let schema =
            TableSchema::new(&Schema::new(vec![Field::new("id", DataType::Int64, false)])).unwrap();
        // Planned at version 0; two appends land first.
        let added = files(root, &[("a-1.parquet", 2, 2)]);
        let removed = ["a.parquet".to_string()];
        for n in 0..2 {
            let more = files(root, &[(&format!("more-{n}.parquet"), 10, 11)]);
            create(&NewTable {
                location: &location,
                schema: &schema,
                partition: &[],
                files: &more,
            })
            .unwrap();
        }
        let c = commit_change(&delete(&location, 0, &added, &removed, &[])).unwrap();
        assert_eq!(c.version, 3);
        assert_eq!(lines(&c.log_file)[0]["commitInfo"]["readVersion"], 0);
        let state = replay(&location, None).unwrap().unwrap();
        assert_eq!(
            state.files.keys().collect::<Vec<_>>(),
            [
                "a-1.parquet",
                "b.parquet",
                "c.parquet",
                "more-0.parquet",
                "more-1.parquet"
            ]
        );
    }

    #[test]
    fn concurrent_changes_and_appends_all_land() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let location = table(root, &[]);
        let schema =
            TableSchema::new(&Schema::new(vec![Field::new("id", DataType::Int64, false)])).unwrap();
        for round in 0..20 {
            let read_version = replay(&location, None).unwrap().unwrap().version;
            let live = if round == 0 {
                "a.parquet".to_string()
            } else {
                format!("a-{}.parquet", round - 1)
            };
            let added = files(root, &[(&format!("a-{round}.parquet"), 1, 2)]);
            let more = files(root, &[(&format!("more-{round}.parquet"), 7, 8)]);
            let barrier = std::sync::Barrier::new(2);
            let (changed, appended) = std::thread::scope(|s| {
                let change = s.spawn(|| {
                    barrier.wait();
                    commit_change(&Change {
                        operation: Operation::Update { predicate: None },
                        ..delete(
                            &location,
                            read_version,
                            &added,
                            std::slice::from_ref(&live),
                            &[],
                        )
                    })
                });
                let append = s.spawn(|| {
                    barrier.wait();
                    create(&NewTable {
                        location: &location,
                        schema: &schema,
                        partition: &[],
                        files: &more,
                    })
                });
                (change.join().unwrap(), append.join().unwrap())
            });
            let (changed, appended) = (changed.unwrap(), appended.unwrap());
            assert_ne!(changed.version, appended.version);
            let state = replay(&location, None).unwrap().unwrap();
            assert_eq!(state.version, read_version + 2);
            assert!(state.files.contains_key(&format!("a-{round}.parquet")));
            assert!(state.files.contains_key(&format!("more-{round}.parquet")));
            assert!(!state.files.contains_key(&live));
        }
        // Version 20 and 40 were due checkpoints.
        assert!(
            root.join(LOG_DIR)
                .join("00000000000000000040.checkpoint.parquet")
                .exists()
        );
    }

    #[test]
    fn bad_changes_are_refused_and_leave_the_table() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let location = table(root, &[]);
        let added = files(root, &[("a-1.parquet", 2, 2)]);
        let a = ["a.parquet".to_string()];
        commit_change(&delete(&location, 0, &added, &a, &[])).unwrap();
        let before = log_names(root);
        let new = files(root, &[("x.parquet", 1, 1)]);
        files(root, &[("_change_data/c.parquet", 0, 0)]);
        let cdc = [CdcFile {
            path: "_change_data/c.parquet".into(),
            size: 8,
        }];
        let ghost = ["ghost.parquet".to_string()];
        let b_twice = ["b.parquet".to_string(), "b.parquet".to_string()];
        let b = ["b.parquet".to_string()];
        let cases: Vec<(Change<'_>, &str)> = vec![
            (
                delete(&location, 1, &new, &a, &[]),
                "not a live data file of the Delta table at version 1: an earlier version removed it",
            ),
            (
                delete(&location, 1, &new, &ghost, &[]),
                "no version added it",
            ),
            (
                Change {
                    also_read: &ghost,
                    ..delete(&location, 1, &new, &[], &[])
                },
                "ghost.parquet: not a live data file",
            ),
            (
                delete(&location, 1, &[], &[], &[]),
                "adds and removes no file",
            ),
            (delete(&location, 1, &[], &b_twice, &[]), "named twice"),
            (
                delete(&location, 1, &added, &[], &[]),
                "`a-1.parquet` is a data file of the table",
            ),
            (
                delete(&location, 1, &new, &b, &cdc),
                "does not record its change data feed",
            ),
            (
                Change {
                    data_change: false,
                    ..delete(&location, 1, &new, &[], &[])
                },
                "removes the files whose rows it adds",
            ),
            (
                delete(&location, 7, &new, &[], &[]),
                "has no version 7 (its newest is 1)",
            ),
        ];
        for (change, want) in cases {
            let e = commit_change(&change).unwrap_err().to_string();
            assert!(e.contains(want), "{want}: {e}");
            assert_eq!(log_names(root), before);
        }

        // A table of the change data feed: a rewrite needs change data,
        // a compaction has none; an append-only table keeps its data.
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let location = table(
            root,
            &[
                (properties::CHANGE_DATA_FEED, "true"),
                (properties::APPEND_ONLY, "true"),
            ],
        );
        let p = replay(&location, None).unwrap().unwrap().protocol;
        assert_eq!((p.min_reader_version, p.min_writer_version), (1, 4));
        let new = files(root, &[("x.parquet", 1, 2)]);
        files(root, &[("_change_data/c.parquet", 0, 0)]);
        let outside = [CdcFile {
            path: "c.parquet".into(),
            size: 8,
        }];
        for (change, want) in [
            (delete(&location, 0, &new, &a, &[]), "append-only"),
            (
                Change {
                    data_change: false,
                    ..delete(&location, 0, &new, &a, &cdc)
                },
                "has no change data",
            ),
            (
                delete(&location, 0, &[], &[], &outside),
                "is not under `_change_data/`",
            ),
        ] {
            let e = commit_change(&change).unwrap_err().to_string();
            assert!(e.contains(want), "{want}: {e}");
        }
        assert_eq!(log_names(root), [log_file_name(0)]);
        // Compaction is no data change: an append-only table takes it.
        let c = commit_change(&Change {
            operation: Operation::Optimize,
            data_change: false,
            ..delete(&location, 0, &new, &a, &[])
        })
        .unwrap();
        assert_eq!(c.version, 1);
    }

    #[test]
    fn a_rewrite_without_change_data_is_refused_on_a_change_data_table() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let location = table(root, &[(properties::CHANGE_DATA_FEED, "true")]);
        let new = files(root, &[("x.parquet", 1, 1)]);
        let a = ["a.parquet".to_string()];
        let e = commit_change(&delete(&location, 0, &new, &a, &[]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("carries change data files"), "{e}");
        // Whole files removed, or files only added: no change data needed.
        commit_change(&delete(&location, 0, &[], &a, &[])).unwrap();
        let c = commit_change(&Change {
            operation: Operation::Write,
            ..delete(&location, 1, &new, &[], &[])
        })
        .unwrap();
        let info = &lines(&c.log_file)[0]["commitInfo"];
        assert_eq!(info["isBlindAppend"], true);
        assert_eq!(info["operationParameters"]["mode"], "Append");
    }

    #[test]
    fn operations_name_their_parameters() {
        let merge = Operation::Merge {
            predicate: "t.id = s.id".into(),
            matched: vec!["update".into()],
            not_matched: vec!["insert".into()],
            not_matched_by_source: vec![],
        };
        assert_eq!(merge.name(), "MERGE");
        let p = merge.parameters(&[], false);
        assert_eq!(p["predicate"], r#"["t.id = s.id"]"#);
        assert_eq!(p["matchedPredicates"], r#"[{"actionType":"update"}]"#);
        assert_eq!(p["notMatchedBySourcePredicates"], "[]");
        let p = Operation::Update { predicate: None }.parameters(&[], true);
        assert_eq!(p["predicate"], "[]");
        let p = Operation::Write.parameters(&["flag".into()], true);
        assert_eq!(
            (p["mode"].as_str(), p["partitionBy"].as_str()),
            ("Overwrite", r#"["flag"]"#)
        );
    }

    #[test]
    fn rows_marked_deleted_go_into_deletion_vectors() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let location = table(root, &[(properties::DELETION_VECTORS, "true")]);
        let p = replay(&location, None).unwrap().unwrap().protocol;
        assert_eq!((p.min_reader_version, p.min_writer_version), (3, 7));
        let mark = |read_version, rows: Vec<u64>| {
            let marked = vec![DeletedRows {
                path: "a.parquet".into(),
                rows,
            }];
            commit_change(&Change {
                deleted_rows: &marked,
                ..delete(&location, read_version, &[], &[], &[])
            })
        };
        let c = mark(0, vec![1]).unwrap();
        assert_eq!((c.files, c.removed), (1, 1));
        let l = lines(&c.log_file);
        assert_eq!(
            l[0]["commitInfo"]["operationMetrics"]["numDeletedRows"],
            "1"
        );
        assert!(l[1]["remove"].get("deletionVector").is_none());
        let add = &l[2]["add"];
        assert_eq!(add["path"], "a.parquet");
        assert_eq!(add["deletionVector"]["storageType"], "u");
        assert_eq!(add["deletionVector"]["cardinality"], 1);
        assert!(
            add["stats"]
                .as_str()
                .unwrap()
                .starts_with(r#"{"tightBounds":false,"numRecords":2,"#)
        );
        let state = replay(&location, None).unwrap().unwrap();
        assert_eq!(state.rows(), 5);
        // A second delete in the same file: the vector holds both rows,
        // and the remove names the vector it replaces.
        let c = mark(1, vec![0]).unwrap();
        let l = lines(&c.log_file);
        assert_eq!(l[1]["remove"]["deletionVector"], add["deletionVector"]);
        let state = replay(&location, None).unwrap().unwrap();
        assert_eq!(state.rows(), 4);
        let v = state.files["a.parquet"].deletion_vector.clone().unwrap();
        assert_eq!(dv::read(&location, &v, 2).unwrap(), [0, 1]);
        assert_eq!(
            l[0]["commitInfo"]["operationMetrics"]["numDeletionVectorsRemoved"],
            "1"
        );
        // The vectors' files are the table's.
        let referenced = crate::delta::referenced(&location).unwrap().unwrap();
        let vectors: Vec<_> = referenced
            .iter()
            .filter(|p| p.starts_with("deletion_vector_"))
            .collect();
        assert_eq!(vectors.len(), 2);
        // Rows deleted already, past the file's, or in a rewrite that
        // changes no data: refused, nothing committed.
        for (result, want) in [
            (mark(2, vec![1]), "deleted already"),
            (mark(2, vec![5]), "has 2 rows: row 5"),
            (mark(2, vec![]), "each once"),
            (
                commit_change(&Change {
                    data_change: false,
                    deleted_rows: &[DeletedRows {
                        path: "b.parquet".into(),
                        rows: vec![0],
                    }],
                    ..delete(&location, 2, &[], &[], &[])
                }),
                "marks no rows deleted",
            ),
        ] {
            let e = result.unwrap_err().to_string();
            assert!(e.contains(want), "{want}: {e}");
        }
        assert_eq!(log_names(root).len(), 3);
        // Two changes marking rows of one file from one version: the
        // second is a conflict.
        let b = |row| {
            vec![DeletedRows {
                path: "b.parquet".into(),
                rows: vec![row],
            }]
        };
        let (b0, b1) = (b(0), b(1));
        commit_change(&Change {
            deleted_rows: &b0,
            ..delete(&location, 2, &[], &[], &[])
        })
        .unwrap();
        let e = commit_change(&Change {
            deleted_rows: &b1,
            ..delete(&location, 2, &[], &[], &[])
        })
        .unwrap_err();
        assert!(matches!(e, Error::Conflict { version: 3, .. }), "{e}");

        // A table without deletion vectors takes none.
        let dir = tempfile::tempdir().unwrap();
        let location = table(dir.path(), &[]);
        let e = commit_change(&Change {
            deleted_rows: &b0,
            ..delete(&location, 0, &[], &[], &[])
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("takes no deletion vectors"), "{e}");
        assert_eq!(wide_bounds("{}"), r#"{"tightBounds":false}"#);
        assert_eq!(
            wide_bounds(r#"{"numRecords":1,"tightBounds":true}"#),
            r#"{"numRecords":1,"tightBounds":false}"#
        );
    }
}
