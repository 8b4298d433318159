//! Iceberg format version 2: a table's metadata over data files already
//! written, committed as a new version of a path table (and, through a
//! hook, of a catalog's entry), and the files a version holds, read back.
//!
//! This module owns the table's snapshots: [`commit`] appends data files,
//! [`commit_change`] commits a [`Change`] of rows (data files added and
//! removed, rows deleted by position), and [`live_files`] lists what a
//! snapshot holds from its manifests alone. Its submodules: `schema` and
//! `spec` (what a table is), `values` (partition values and bounds in
//! Iceberg's binary form, both ways), `avro` (manifests and lists
//! written), `read` (read back, whoever wrote them), `live` (a snapshot's
//! live files), `snapshot` (entries of new files, summaries, metadata of
//! the next version), `deletes` (position delete files), `change` (a
//! change checked and turned into an attempt's manifests) and `model`
//! (what the functions take and give).
//!
//! # Data flow
//!
//! [`commit`]: the new files' facts -> one manifest of them (partition
//! values, record counts, sizes, column sizes, value and null counts,
//! bounds, split offsets) under `LOCATION/metadata/` -> per attempt, the
//! manifest list of the new snapshot (the current snapshot's manifests
//! that hold live files, then the new one) and `vN.metadata.json`, claimed
//! only if absent -> `version-hint.text` moved forward, as Hadoop tables
//! keep it.
//!
//! [`commit_change`]: the current snapshot's manifests read -> the change
//! checked against its live files (nothing written when it is refused)
//! -> once: the manifest of the added data files, one position delete
//! file per data file rows are deleted of (Parquet through strata's
//! writer, in that file's partition directory, its facts read back) and
//! their delete manifest -> per attempt, on the newest snapshot: the
//! change checked again (conflicts), the manifests that hold a removed
//! file written again (its entry deleted, the others existing, their
//! sequence numbers kept; position delete files of a removed file go with
//! it), the list (kept manifests, rewritten ones, new ones), the summary,
//! `vN.metadata.json` claimed only if absent -> `version-hint.text`.
//!
//! [`live_files`]: `vN.metadata.json` -> the snapshot's manifest list ->
//! each manifest's added and existing entries, sequence numbers and
//! snapshot ids inherited from the list where left null, bounds decoded
//! by the schema's types.
//!
//! # Guarantees
//!
//! * **A version is one claim.** Manifests, lists and delete files are
//!   written before the metadata file that names them, and that file is
//!   created only if absent: a killed commit leaves the table as it was.
//!   A commit that fails removes what it wrote, unless its claim failed
//!   in a way that leaves unknown whether the version is there.
//! * **No lost commits.** When another writer claims the version first,
//!   the commit is built again on the newer version; a change whose files
//!   that version removed, or (a rewrite) to whose removed files it added
//!   deletes, aborts with [`Error::Conflict`] instead, the other version
//!   standing.
//! * **Sequence numbers as the spec has them.** Each snapshot takes the
//!   next one; added entries inherit it from the list, existing and
//!   deleted ones carry theirs; a position delete file applies to the
//!   data files of its partition whose data sequence number is at most
//!   its own, so it never applies to files added after it.
//! * **Exact summaries.** A change's totals are counted from the live
//!   files, not carried from the parent's summary.

mod avro;
mod change;
mod deletes;
mod live;
mod model;
mod read;
pub mod schema;
mod snapshot;
mod spec;
pub mod values;

#[cfg(test)]
mod tests;

use std::path::Path;

use serde_json::Value;
use strata_layout::PartitionField;

pub use model::{
    Change, Committed, Content, Current, DELETE_FILE_PATH_ID, DELETE_POS_ID, LiveFile, NewTable,
    PositionDeletes, SortField,
};
pub use schema::{FIELD_ID_KEY, Primitive, TableSchema};

use crate::{
    Error,
    dir::TableDir,
    ids::{now_ms, random_id, uuid},
};
use avro::{ManifestContent, ManifestFile};
use model::text;
use spec::TableLayout;

/// How many times a commit is built again on top of another writer's
/// version before it gives up.
pub const COMMIT_RETRIES: usize = 100;

fn bad(path: &Path, reason: impl Into<String>) -> Error {
    Error::BadTable {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

/// The current version of the path table at `location` (the highest
/// `vN.metadata.json`), or `None` when there is no table there.
///
/// # Errors
/// [`Error::BadTable`] when `location` holds a Delta table, or metadata
/// that is missing, does not parse or is not format version 1 or 2.
pub fn current(location: &TableDir) -> Result<Option<Current>, Error> {
    if location.has_dir("_delta_log")? {
        return Err(bad(
            &location.root(),
            "holds a Delta table (_delta_log/), not an Iceberg table",
        ));
    }
    let dir = location.at("metadata");
    let Some(entries) = location.list("metadata")? else {
        return Ok(None);
    };
    let mut newest: Option<u64> = None;
    for name in &entries {
        if let Some(n) = name
            .strip_prefix('v')
            .and_then(|r| r.strip_suffix(".metadata.json"))
            .and_then(|n| n.parse::<u64>().ok())
        {
            newest = Some(newest.map_or(n, |m| m.max(n)));
        }
    }
    let Some(version) = newest else {
        if entries.iter().any(|n| n == "version-hint.text") {
            return Err(bad(
                &dir,
                "has version-hint.text but no vN.metadata.json: the table's metadata is missing",
            ));
        }
        return Ok(None);
    };
    let rel = format!("metadata/v{version}.metadata.json");
    let path = location.at(&rel);
    let body = location
        .read(&rel)?
        .ok_or_else(|| bad(&path, "the metadata file is gone"))?;
    let metadata: Value = serde_json::from_slice(&body)
        .map_err(|e| bad(&path, format!("not Iceberg table metadata: {e}")))?;
    match metadata["format-version"].as_i64() {
        Some(1 | 2) => {}
        other => {
            return Err(bad(
                &path,
                format!("not Iceberg table metadata of format version 1 or 2 ({other:?})"),
            ));
        }
    }
    Ok(Some(Current {
        version,
        path,
        metadata,
    }))
}

/// Checks that data files of `schema`, partitioned by `partition`, can be
/// committed at `location`: a new table, or an Iceberg table of the same
/// schema and partition spec. Returns the table's current version.
///
/// # Errors
/// [`Error::BadTable`] for another format or unreadable metadata;
/// [`Error::Unsupported`] naming the first difference of schema or
/// partitioning.
pub fn check_target(
    location: &TableDir,
    schema: &TableSchema,
    partition: &[PartitionField],
) -> Result<Option<Current>, Error> {
    let Some(cur) = current(location)? else {
        return Ok(None);
    };
    schema::check_same(&cur.metadata, schema, &cur.path)?;
    let layout = TableLayout::new(schema, partition, &[], &cur.path)?;
    layout.check_spec(&cur.metadata, &cur.path)?;
    Ok(Some(cur))
}

/// What a catalog does at a commit: given the version replaced (`None`
/// for a new table) and the new metadata file, records the new one, or
/// fails with [`Error::Conflict`] when another writer moved the table
/// first (the commit is then built again on top of the newest version).
pub type CatalogHook<'h> = &'h mut dyn FnMut(Option<&Path>, &Path) -> Result<(), Error>;

/// Commits `t`'s data files as a new snapshot: version 1 of a new table,
/// or an append to the current version; `catalog` is told of the new
/// version once its file is claimed.
///
/// # Errors
/// [`Error::BadTable`], [`Error::Unsupported`] as [`check_target`];
/// [`Error::Conflict`] after [`COMMIT_RETRIES`] versions committed
/// first by other writers; IO and Avro errors.
pub fn commit(t: &NewTable<'_>, catalog: Option<CatalogHook<'_>>) -> Result<Committed, Error> {
    let edit = Edit {
        removed: &[],
        deletes: &[],
        equality: &[],
        replace: false,
    };
    run(t, &edit, catalog, &mut |_| Ok(()))
}

/// Commits `c` as a new snapshot of its table: its added data files, its
/// removed data files (deleted entries in rewritten manifests) and its
/// deleted rows (a position delete file per data file, in that file's
/// partition directory, listed in a delete manifest); `catalog` is told
/// of the new version once its file is claimed.
///
/// The snapshot's operation is `append` when the change only adds files,
/// `delete` when it only removes files or deletes rows, `overwrite` when
/// it does both, and `replace` when [`Change::replace`] marks it a
/// rewrite that keeps the rows. Position delete files apply to the data
/// files whose data sequence number is at most theirs: the snapshot's
/// sequence number, above that of every file it deletes rows of. A
/// position delete file whose one data file the change removes is
/// removed with it (its rows are gone; a rewrite holds only the rows
/// left). The summary counts the files and rows added and removed and
/// gives the totals of the live files after.
///
/// A change that only adds files to a table that does not exist yet
/// creates it, as [`commit`] does.
///
/// # Concurrent writers
/// The change is checked against the current snapshot before anything is
/// written. When another writer claims the next version first, the
/// commit is built again on that version, as [`commit`]'s is, unless that
/// version no longer holds a file this change removes or deletes rows of,
/// or (for a change that adds files) holds a delete file added since that
/// may apply to a file it removes: then it aborts with
/// [`Error::Conflict`], its delete files and manifests removed. Nothing
/// is lost either way: the other writer's version stands, and this change
/// can be planned again on it.
///
/// # Errors
/// [`Error::BadChange`] for a change the table cannot take (a removed or
/// deleted-from file that is not one of its live data files, a row past
/// a file's end, a file both removed and deleted from, an added file it
/// already holds, a replace that deletes rows or whose files cannot hold
/// the rows of those it removes), the table unchanged;
/// [`Error::BadTable`], [`Error::Unsupported`] as [`check_target`];
/// [`Error::Conflict`] as above, or after [`COMMIT_RETRIES`] versions
/// committed first by other writers; [`Error::Write`] when a delete file
/// does not encode; IO and Avro errors.
pub fn commit_change(c: &Change<'_>, catalog: Option<CatalogHook<'_>>) -> Result<Committed, Error> {
    let edit = Edit {
        removed: &c.removed,
        deletes: &c.position_deletes,
        equality: &c.equality_deletes,
        replace: c.replace,
    };
    run(&c.table, &edit, catalog, &mut |_| Ok(()))
}

/// The removals and deletes of a change.
struct Edit<'c> {
    removed: &'c [String],
    deletes: &'c [PositionDeletes],
    equality: &'c [arrow_array::RecordBatch],
    replace: bool,
}

impl Edit<'_> {
    /// Whether the change only adds files.
    fn is_append(&self) -> bool {
        self.removed.is_empty()
            && self.deletes.iter().all(|d| d.positions.is_empty())
            && self.equality.iter().all(|b| b.num_rows() == 0)
            && !self.replace
    }
}

/// The current snapshot's manifests of `cur` (none without a snapshot).
fn current_snapshot(location: &TableDir, cur: &Current) -> Result<live::Manifests, Error> {
    match live::snapshot(&cur.metadata, &cur.path, None)? {
        Some(s) => live::manifests(location, s, &cur.path),
        None => Ok(Vec::new()),
    }
}

/// Removes files a commit wrote that no version refers to.
fn discard(location: &TableDir, files: &[String]) {
    for rel in files {
        let _ = location.remove(rel);
    }
}

/// Commits `t`'s files with `edit`; `before_claim` runs before each
/// attempt claims its version (a test's concurrent writer).
///
/// Every file the commit writes is removed again when it fails, unless
/// the claim of its version failed in a way that leaves it unknown
/// whether the version is there.
fn run(
    t: &NewTable<'_>,
    edit: &Edit<'_>,
    catalog: Option<CatalogHook<'_>>,
    before_claim: &mut dyn FnMut(usize) -> Result<(), Error>,
) -> Result<Committed, Error> {
    let layout = TableLayout::new(t.schema, t.partition, t.sort, &t.location.root())?;
    let mut added = snapshot::Added::of(t, &layout)?;
    let cur = current(t.location)?;
    added.set_sort_order(layout.sort_order_id(cur.as_ref().map(|c| &c.metadata)));

    // A change is checked against the snapshot it starts from before
    // anything is written.
    let change = if edit.is_append() {
        None
    } else {
        let base = cur.as_ref().ok_or_else(|| Error::BadChange {
            path: t.location.root(),
            reason: "holds no Iceberg table to change".into(),
        })?;
        schema::check_same(&base.metadata, t.schema, &base.path)?;
        layout.check_spec(&base.metadata, &base.path)?;
        let manifests = current_snapshot(t.location, base)?;
        let named = change::Named {
            added: added
                .entries
                .iter()
                .map(|e| (e.file.path.clone(), e.file.rows))
                .collect(),
            removed: edit.removed,
            deletes: edit.deletes,
            replace: edit.replace,
        };
        let plan = change::Plan::new(t.location, &layout, &named, &manifests)?;
        Some((plan, manifests))
    };
    let meta = vec![
        ("schema", t.schema.json.to_string()),
        ("schema-id", "0".into()),
        ("partition-spec", layout.spec_json.to_string()),
        ("partition-spec-id", "0".into()),
        ("format-version", "2".into()),
    ];
    let mut c = Attempts {
        t,
        replace: edit.replace,
        layout,
        snapshot_id: random_id(),
        commit_uuid: uuid(),
        added,
        meta,
        change,
        equality: edit.equality,
        ours: Vec::new(),
        deletes: Vec::new(),
        written: Vec::new(),
        next: 2,
        uncertain: false,
    };
    let committed = c
        .write_once()
        .and_then(|()| c.attempts(cur, catalog, before_claim));
    match committed {
        Ok(committed) => {
            advance_hint(t.location, committed.version)?;
            Ok(committed)
        }
        Err(e) => {
            if !c.uncertain {
                discard(t.location, &c.written);
            }
            Err(e)
        }
    }
}

/// A commit in the making: what its attempts share.
struct Attempts<'a> {
    t: &'a NewTable<'a>,
    replace: bool,
    layout: TableLayout,
    snapshot_id: i64,
    commit_uuid: String,
    added: snapshot::Added,
    /// The manifests' key-value metadata but their content.
    meta: Vec<(&'static str, String)>,
    /// A change's plan and the manifests of the snapshot it starts from.
    change: Option<(change::Plan, live::Manifests)>,
    /// The lines of the manifests written once (their sequence numbers
    /// set per attempt).
    ours: Vec<ManifestFile>,
    /// The change's rows deleted by key.
    equality: &'a [arrow_array::RecordBatch],
    /// The entries of the change's delete files.
    deletes: Vec<avro::Entry>,
    /// The files written so far that no version refers to yet.
    written: Vec<String>,
    /// The number of the next manifest written.
    next: usize,
    /// Whether a claim failed in a way that leaves unknown whether the
    /// version is there (its files are then kept).
    uncertain: bool,
}

impl Attempts<'_> {
    /// Writes what the commit writes once, whatever its retries: the
    /// manifest of the added data files (for an append even when there
    /// are none), and for a change its delete files and their manifest.
    fn write_once(&mut self) -> Result<(), Error> {
        let t = self.t;
        if self.change.is_none() || !self.added.entries.is_empty() {
            let entries = std::mem::take(&mut self.added.entries);
            let summaries = self.added.partition_summaries();
            let put = self.put_manifest(0, &entries, ManifestContent::Data, summaries);
            self.added.entries = entries;
            put?;
        }
        let Some((plan, _)) = &self.change else {
            return Ok(());
        };
        let mut summaries = snapshot::Summaries::new(self.layout.fields.len());
        let mut entries = Vec::with_capacity(plan.targets.len());
        for (k, target) in plan.targets.iter().enumerate() {
            let rel = format!(
                "{}/{}-{k:05}-deletes.parquet",
                deletes::dir_for(t.location, &target.path),
                self.commit_uuid
            );
            // Written before it is known to be complete: removed on
            // failure either way.
            self.written.push(rel.clone());
            let facts = deletes::write(t.location, &rel, &target.path, &target.positions)?;
            summaries.add(&target.partition);
            entries.push(deletes::entry(
                t.location.uri(&rel),
                target.partition.clone(),
                &facts,
            ));
        }
        for (k, keys) in self.equality.iter().enumerate() {
            if keys.num_rows() == 0 {
                continue;
            }
            if !self.layout.fields.is_empty() {
                return Err(Error::Unsupported(
                    "equality deletes of a partitioned table".into(),
                ));
            }
            let rel = format!("data/{}-{k:05}-eq-deletes.parquet", self.commit_uuid);
            self.written.push(rel.clone());
            let facts = deletes::write_equality(t.location, &rel, t.schema, keys)?;
            summaries.add(&[]);
            entries.push(deletes::equality_entry(
                t.location.uri(&rel),
                t.schema,
                &facts,
            ));
        }
        if !entries.is_empty() {
            self.put_manifest(1, &entries, ManifestContent::Deletes, summaries.binary())?;
        }
        self.deletes = entries;
        Ok(())
    }

    /// Writes manifest `n` of `entries`, added by this commit's snapshot,
    /// and keeps its line.
    fn put_manifest(
        &mut self,
        n: usize,
        entries: &[avro::Entry],
        content: ManifestContent,
        partitions: Vec<avro::FieldSummary>,
    ) -> Result<(), Error> {
        let rel = format!("metadata/{}-m{n}.avro", self.commit_uuid);
        let path = self.t.location.at(&rel);
        let mut meta = self.meta.clone();
        meta.push(("content", content.name().into()));
        let bytes = avro::manifest(&path, &self.layout.fields, entries, self.snapshot_id, &meta)?;
        self.t.location.put_new(&rel, &bytes)?;
        self.written.push(rel);
        self.ours.push(ManifestFile {
            path: text(&path),
            length: bytes.len() as u64,
            content,
            sequence_number: 0,
            min_sequence_number: 0,
            snapshot_id: self.snapshot_id,
            added_files: entries.len(),
            existing_files: 0,
            deleted_files: 0,
            added_rows: entries.iter().map(|e| e.file.rows).sum(),
            existing_rows: 0,
            deleted_rows: 0,
            partitions,
        });
        Ok(())
    }

    /// Claims the version after `cur`, then after each version another
    /// writer claimed first, up to [`COMMIT_RETRIES`] times.
    fn attempts(
        &mut self,
        mut cur: Option<Current>,
        mut catalog: Option<CatalogHook<'_>>,
        before_claim: &mut dyn FnMut(usize) -> Result<(), Error>,
    ) -> Result<Committed, Error> {
        for attempt in 0..COMMIT_RETRIES {
            if attempt > 0 {
                // Another writer moved the table: build on its version.
                cur = current(self.t.location)?;
            }
            if let Some(c) = self.attempt(attempt, cur.as_ref(), &mut catalog, before_claim)? {
                return Ok(c);
            }
        }
        Err(Error::Conflict {
            path: self.t.location.root(),
            version: COMMIT_RETRIES as u64,
        })
    }

    /// One attempt on top of `cur`: the list, the metadata and its claim;
    /// `None` when another writer took the version first.
    fn attempt(
        &mut self,
        attempt: usize,
        cur: Option<&Current>,
        catalog: &mut Option<CatalogHook<'_>>,
        before_claim: &mut dyn FnMut(usize) -> Result<(), Error>,
    ) -> Result<Option<Committed>, Error> {
        let t = self.t;
        if let Some(cur) = cur {
            schema::check_same(&cur.metadata, t.schema, &cur.path)?;
            self.layout.check_spec(&cur.metadata, &cur.path)?;
        }
        let version = cur.map_or(1, |c| c.version + 1);
        let sequence_number = cur
            .and_then(|c| c.metadata["last-sequence-number"].as_i64())
            .unwrap_or(0)
            + 1;
        let ours: Vec<ManifestFile> = self
            .ours
            .iter()
            .map(|m| ManifestFile {
                sequence_number,
                min_sequence_number: sequence_number,
                ..m.clone()
            })
            .collect();
        let before = self.written.len();
        // The manifest list: the current snapshot's manifests (those a
        // change rewrites written again), then ours.
        let (kept, lines, summary, operation) = match (&self.change, cur) {
            (None, None) => (Vec::new(), ours, Value::Null, "append"),
            (None, Some(c)) => (
                snapshot::current_manifests(t.location, &c.metadata, &c.path)?,
                ours,
                snapshot::append_summary(&self.added, &snapshot::current_summary(&c.metadata)),
                "append",
            ),
            (Some(_), None) => return Err(bad(&t.location.root(), "the table is gone")),
            (Some((plan, base)), Some(c)) => {
                let fresh;
                let manifests = if attempt == 0 {
                    base
                } else {
                    fresh = current_snapshot(t.location, c)?;
                    &fresh
                };
                plan.check(t.location, c.version, manifests)?;
                let rw = plan.rewrite(
                    t.location,
                    &self.layout,
                    manifests,
                    (self.snapshot_id, sequence_number),
                    change::Names {
                        commit: &self.commit_uuid,
                        next: &mut self.next,
                        written: &mut self.written,
                    },
                    &self.meta,
                )?;
                let adds = !self.added.entries.is_empty();
                let removes = !plan.removed.is_empty() || !self.deletes.is_empty();
                let operation = change::operation(adds, removes, self.replace);
                let added = &self.added;
                let summary = change::summary(
                    operation,
                    (added.entries.len() as u64, added.rows, added.bytes),
                    &added.partitions,
                    &self.deletes,
                    &rw.counts,
                );
                let mut lines = rw.lines;
                lines.extend(ours);
                (rw.kept, lines, summary, operation)
            }
        };
        let list_rel = format!(
            "metadata/snap-{}-{}-{}.avro",
            self.snapshot_id,
            attempt + 1,
            self.commit_uuid
        );
        let list_path = t.location.at(&list_rel);
        let list = avro::manifest_list(
            &list_path,
            &kept,
            &lines,
            &[
                ("snapshot-id", self.snapshot_id.to_string()),
                (
                    "parent-snapshot-id",
                    cur.and_then(|c| c.metadata["current-snapshot-id"].as_i64())
                        .map_or_else(|| "null".into(), |p| p.to_string()),
                ),
                ("sequence-number", sequence_number.to_string()),
                ("format-version", "2".into()),
            ],
        )?;
        t.location.put_new(&list_rel, &list)?;
        self.written.push(list_rel);
        let now = now_ms();
        let metadata = match cur {
            None => snapshot::new_metadata(
                t,
                &self.layout,
                &self.added,
                self.snapshot_id,
                &list_path,
                now,
            ),
            Some(c) => snapshot::next_metadata(
                c,
                summary,
                self.snapshot_id,
                sequence_number,
                &list_path,
                now,
            ),
        };
        let total_rows = snapshot::count(
            &metadata["snapshots"]
                .as_array()
                .and_then(|s| s.last())
                .map_or(Value::Null, |s| s["summary"].clone()),
            "total-records",
        );
        let target_rel = format!("metadata/v{version}.metadata.json");
        let target = t.location.at(&target_rel);
        let body = serde_json::to_vec_pretty(&metadata).map_err(|e| bad(&target, e.to_string()))?;
        before_claim(attempt)?;
        match t.location.put_new(&target_rel, &body) {
            Ok(()) => {}
            Err(Error::Store(strata_store::Error::OutputExists { .. })) => {
                // Another writer took this version: build on top of it.
                self.forget_since(before);
                return Ok(None);
            }
            Err(e) => {
                self.uncertain = true;
                return Err(e);
            }
        }
        if let Some(hook) = catalog.as_mut() {
            match hook(cur.map(|c| c.path.as_path()), &target) {
                Ok(()) => {}
                Err(Error::Conflict { .. }) => {
                    let _ = t.location.remove(&target_rel);
                    self.forget_since(before);
                    return Ok(None);
                }
                Err(e) => {
                    let _ = t.location.remove(&target_rel);
                    return Err(e);
                }
            }
        }
        Ok(Some(Committed {
            metadata: target,
            version,
            snapshot_id: self.snapshot_id,
            rows: self.added.rows,
            total_rows,
            retries: attempt,
            operation,
        }))
    }

    /// Removes the files written since the first `keep` (an attempt's
    /// list and rewritten manifests).
    fn forget_since(&mut self, keep: usize) {
        discard(self.t.location, &self.written[keep..]);
        self.written.truncate(keep);
    }
}

/// The live files of the current snapshot of the table at `location`:
/// the entries of its manifests whose status is added or existing, data
/// and delete files alike, in the manifest list's order (none for a
/// table without a snapshot).
///
/// # Errors
/// [`Error::BadTable`] when `location` holds no Iceberg table, or as
/// [`current`]; [`Error::Avro`] for a manifest list or manifest that does
/// not read; IO or store errors, a missing one too.
pub fn live_files(location: &TableDir) -> Result<Vec<LiveFile>, Error> {
    live_files_at(location, None)
}

/// The live files of snapshot `snapshot_id` of the table at `location`
/// (its current one for `None`), as [`live_files`].
///
/// # Errors
/// As [`live_files`]; [`Error::BadTable`] for a snapshot the table does
/// not have.
pub fn live_files_at(
    location: &TableDir,
    snapshot_id: Option<i64>,
) -> Result<Vec<LiveFile>, Error> {
    let cur = current(location)?.ok_or_else(|| bad(&location.root(), "holds no Iceberg table"))?;
    let Some(snapshot) = live::snapshot(&cur.metadata, &cur.path, snapshot_id)? else {
        return Ok(Vec::new());
    };
    let manifests = live::manifests(location, snapshot, &cur.path)?;
    let types = live::column_types(&cur.metadata, Some(snapshot));
    Ok(live::live_files(&manifests, &types))
}

/// The files the current version of the table at `location` reaches,
/// relative to it: every metadata file (`vN.metadata.json`,
/// `version-hint.text`), and of each snapshot its manifest list, the
/// manifests it lists and the data files they name; `None` when there is
/// no table. A file outside the table is left out.
///
/// # Errors
/// As [`current`]; [`Error::Avro`] for a manifest list or manifest that
/// does not read; IO or store errors, a missing one too.
pub fn referenced(
    location: &TableDir,
) -> Result<Option<std::collections::BTreeSet<String>>, Error> {
    let Some(cur) = current(location)? else {
        return Ok(None);
    };
    let mut out = std::collections::BTreeSet::new();
    for name in location.list("metadata")?.unwrap_or_default() {
        if name.ends_with(".metadata.json") || name == "version-hint.text" {
            out.insert(format!("metadata/{name}"));
        }
    }
    let add = |at: &str, out: &mut std::collections::BTreeSet<String>| {
        if let Some(rel) = location.relative(at) {
            out.insert(rel);
        }
    };
    for snapshot in cur.metadata["snapshots"].as_array().into_iter().flatten() {
        let Some(list) = snapshot["manifest-list"].as_str() else {
            continue;
        };
        add(list, &mut out);
        let bytes = location.read_location(list)?;
        for manifest in avro::record_strings(&bytes, Path::new(list), None, "manifest_path")? {
            add(&manifest, &mut out);
            let bytes = location.read_location(&manifest)?;
            for file in
                avro::record_strings(&bytes, Path::new(&manifest), Some("data_file"), "file_path")?
            {
                add(&file, &mut out);
            }
        }
    }
    Ok(Some(out))
}

/// Moves `version-hint.text` to `version` unless it already names a later
/// one (a hint that lags names an older, complete version).
fn advance_hint(location: &TableDir, version: u64) -> Result<(), Error> {
    let hint = "metadata/version-hint.text";
    let now = location
        .read(hint)?
        .and_then(|t| String::from_utf8(t).ok())
        .and_then(|t| t.trim().parse::<u64>().ok());
    if now.is_some_and(|n| n >= version) {
        return Ok(());
    }
    location.put(hint, version.to_string().as_bytes())
}
