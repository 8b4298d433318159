//! A change of a table's rows checked against the live files of the
//! snapshot it starts from, then, at each commit attempt, against the
//! newest snapshot, and turned into that attempt's manifests: the
//! manifests that hold a removed file rewritten (its entry deleted, the
//! others existing, with their sequence numbers), position delete files
//! left without their one data file removed with it, the other manifests
//! kept; and the snapshot's operation and summary.
//!
//! A change is refused before anything is written when it names a file
//! the table does not hold, a row past a file's end, or rows of a file it
//! also removes ([`Error::BadChange`]). At a later attempt, built on
//! another writer's version, it aborts with [`Error::Conflict`] when that
//! writer removed a file this change removes or deletes rows of, or, when
//! this change adds files, added deletes that may apply to a file it
//! removes (its rewritten rows would bring back what they delete).

use std::collections::{BTreeMap, BTreeSet};

use apache_avro::types::Value;
use serde_json::{Map, Value as Json};

use super::{
    avro::{self, Entry, ManifestFile, Status},
    live::Manifests,
    model::{Content, DELETE_FILE_PATH_ID, PositionDeletes},
    read::{ListLine, Manifest},
    snapshot::Summaries,
    spec::TableLayout,
    values::PartValue,
};
use crate::{Error, dir::TableDir};

/// A data file rows are deleted from.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    /// As recorded.
    pub(crate) path: String,
    /// In the spec's order.
    pub(crate) partition: Vec<PartValue>,
    /// Sorted and distinct.
    pub(crate) positions: Vec<u64>,
}

/// What a change names, resolved against the live files of the snapshot
/// it starts from.
#[derive(Debug)]
pub(crate) struct Plan {
    /// Removed data files, as recorded.
    pub(crate) removed: BTreeSet<String>,
    /// Data files rows are deleted from.
    pub(crate) targets: Vec<Target>,
    /// Whether the change adds data files.
    adds: bool,
    /// The live delete files of the snapshot it starts from.
    base_deletes: BTreeSet<String>,
}

/// Where an attempt's rewritten manifests go.
pub(crate) struct Names<'n> {
    /// The commit's id: manifests are `metadata/{commit}-m{n}.avro`.
    pub(crate) commit: &'n str,
    /// `n` of the next one.
    pub(crate) next: &'n mut usize,
    /// Each one written, relative to the table.
    pub(crate) written: &'n mut Vec<String>,
}

/// What the change gives an attempt's manifest list.
pub(crate) struct Rewrite {
    /// Lines of the newest snapshot's list kept as they were.
    pub(crate) kept: Vec<Value>,
    /// The lines of the manifests rewritten.
    pub(crate) lines: Vec<ManifestFile>,
    /// Counts of the files removed and of the files live after.
    pub(crate) counts: Counts,
}

/// Files and rows a change removes, and the totals of the live files the
/// snapshot keeps of the one before.
#[derive(Debug, Default)]
pub(crate) struct Counts {
    pub(crate) removed_data_files: u64,
    pub(crate) removed_records: u64,
    pub(crate) removed_delete_files: u64,
    pub(crate) removed_position_deletes: u64,
    pub(crate) removed_bytes: u64,
    /// Partitions of the removed files (their `Debug` form).
    pub(crate) partitions: BTreeSet<String>,
    pub(crate) kept_data_files: u64,
    pub(crate) kept_records: u64,
    pub(crate) kept_delete_files: u64,
    pub(crate) kept_position_deletes: u64,
    pub(crate) kept_equality_deletes: u64,
    pub(crate) removed_equality_delete_files: u64,
    pub(crate) removed_equality_deletes: u64,
    pub(crate) kept_bytes: u64,
}

/// A live entry of a snapshot, and the manifest it is in.
struct Live<'m> {
    line: &'m ListLine,
    manifest: &'m Manifest,
    entry: &'m Entry,
}

/// The live entries of `manifests` by their paths.
fn live_entries(manifests: &Manifests) -> BTreeMap<&str, Live<'_>> {
    let mut out = BTreeMap::new();
    for (line, manifest) in manifests {
        for entry in &manifest.entries {
            if entry.status != Status::Deleted {
                out.insert(
                    entry.file.path.as_str(),
                    Live {
                        line,
                        manifest,
                        entry,
                    },
                );
            }
        }
    }
    out
}

/// The one data file a position delete file's equal `file_path` bounds
/// name.
fn referenced(e: &Entry) -> Option<&str> {
    if e.file.content != Content::PositionDeletes {
        return None;
    }
    fn bound(b: &[(i32, Vec<u8>)]) -> Option<&[u8]> {
        b.iter()
            .find(|(id, _)| *id == DELETE_FILE_PATH_ID)
            .map(|(_, v)| v.as_slice())
    }
    match (bound(&e.file.lower), bound(&e.file.upper)) {
        (Some(lo), Some(hi)) if lo == hi => std::str::from_utf8(lo).ok(),
        _ => None,
    }
}

/// Whether delete file `d` may apply to data file `data`: a position
/// delete file that names one data file, when it is that one; else when
/// both are in one partition.
fn may_apply(d: &Entry, data: &Entry) -> bool {
    match referenced(d) {
        Some(path) => path == data.file.path,
        None => d.file.partition == data.file.partition,
    }
}

/// A file's partition in the order of `layout`'s fields, from its
/// manifest's order `names`.
fn spec_order(
    names: &[String],
    values: &[PartValue],
    layout: &TableLayout,
    path: &str,
) -> Result<Vec<PartValue>, Error> {
    layout
        .fields
        .iter()
        .map(|f| {
            names
                .iter()
                .position(|n| *n == f.name)
                .and_then(|i| values.get(i).cloned())
                .ok_or_else(|| {
                    Error::Unsupported(format!(
                        "{path}: written with another partition spec than the table's (no field {})",
                        f.name
                    ))
                })
        })
        .collect()
}

/// The change's removed and delete-target files, found among `live` by
/// their recorded path or their path relative to the table.
fn find<'l, 'm>(
    live: &'l BTreeMap<&'m str, Live<'m>>,
    location: &TableDir,
    given: &str,
) -> Option<&'l Live<'m>> {
    live.get(given)
        .or_else(|| live.get(location.uri(given).as_str()))
}

fn bad_change(path: &str, reason: impl Into<String>) -> Error {
    Error::BadChange {
        path: path.into(),
        reason: reason.into(),
    }
}

/// What a change's plan is built from.
pub(crate) struct Named<'c> {
    /// The data files added: their locations as metadata records them and
    /// their rows.
    pub(crate) added: Vec<(String, u64)>,
    pub(crate) removed: &'c [String],
    pub(crate) deletes: &'c [PositionDeletes],
    pub(crate) replace: bool,
}

impl Plan {
    /// Checks the change `named` against the live files of `manifests`
    /// (the snapshot it starts from) of the table at `location`.
    ///
    /// # Errors
    /// [`Error::BadChange`] for a file that is not a live data file, a
    /// row past a file's end, a file both removed and deleted from, an
    /// added file the table holds, or a replace that deletes rows or
    /// cannot hold the rows of the files it removes;
    /// [`Error::Unsupported`] for a file of another partition spec.
    pub(crate) fn new(
        location: &TableDir,
        layout: &TableLayout,
        named: &Named<'_>,
        manifests: &Manifests,
    ) -> Result<Plan, Error> {
        let live = live_entries(manifests);
        let data_file = |given: &str| -> Result<&Live<'_>, Error> {
            let l = find(&live, location, given).ok_or_else(|| {
                bad_change(
                    given,
                    format!("not a live data file of the table {location}"),
                )
            })?;
            if l.entry.file.content != Content::Data {
                return Err(bad_change(given, "a delete file, not a data file"));
            }
            if l.line.spec_id != 0 {
                return Err(Error::Unsupported(format!(
                    "{given}: written with partition spec {}, not the table's",
                    l.line.spec_id
                )));
            }
            Ok(l)
        };
        let mut removed = BTreeSet::new();
        for given in named.removed {
            let l = data_file(given)?;
            if !removed.insert(l.entry.file.path.clone()) {
                return Err(bad_change(given, "named twice among the removed files"));
            }
        }
        let mut targets: Vec<Target> = Vec::new();
        for d in named.deletes.iter().filter(|d| !d.positions.is_empty()) {
            let l = data_file(&d.file)?;
            let f = &l.entry.file;
            if removed.contains(&f.path) {
                return Err(bad_change(
                    &d.file,
                    "the change both removes this file and deletes rows of it",
                ));
            }
            if let Some(last) = d.positions.iter().copied().filter(|&p| p >= f.rows).max() {
                return Err(bad_change(
                    &d.file,
                    format!(
                        "row {last} is past the file's end (it holds {} rows)",
                        f.rows
                    ),
                ));
            }
            // A file named twice has its rows deleted by one delete file.
            let at = match targets.iter().position(|t| t.path == f.path) {
                Some(at) => at,
                None => {
                    targets.push(Target {
                        path: f.path.clone(),
                        partition: spec_order(&l.manifest.names, &f.partition, layout, &f.path)?,
                        positions: Vec::new(),
                    });
                    targets.len() - 1
                }
            };
            let positions = &mut targets[at].positions;
            positions.extend_from_slice(&d.positions);
            positions.sort_unstable();
            positions.dedup();
        }
        for (path, _) in &named.added {
            if live.contains_key(path.as_str()) {
                return Err(bad_change(path, "already a live file of the table"));
            }
        }
        if named.replace {
            check_replace(named, &removed, &targets, &live)?;
        }
        let base_deletes = live
            .iter()
            .filter(|(_, l)| l.entry.file.content != Content::Data)
            .map(|(p, _)| (*p).to_string())
            .collect();
        Ok(Plan {
            removed,
            targets,
            adds: !named.added.is_empty(),
            base_deletes,
        })
    }

    /// Checks that the newest snapshot, `manifests` of version `version`
    /// of the table at `location`, still holds every file this change
    /// removes or deletes rows of, and (when it adds files) that no
    /// delete file added since the change's first snapshot may apply to a
    /// file it removes.
    ///
    /// # Errors
    /// [`Error::Conflict`] otherwise.
    pub(crate) fn check(
        &self,
        location: &TableDir,
        version: u64,
        manifests: &Manifests,
    ) -> Result<(), Error> {
        let live = live_entries(manifests);
        let conflict = || Error::Conflict {
            path: location.root(),
            version,
        };
        let named = self
            .removed
            .iter()
            .chain(self.targets.iter().map(|t| &t.path));
        for path in named {
            if live
                .get(path.as_str())
                .is_none_or(|l| l.entry.file.content != Content::Data)
            {
                return Err(conflict());
            }
        }
        if self.adds {
            for (path, d) in &live {
                if d.entry.file.content == Content::Data || self.base_deletes.contains(*path) {
                    continue;
                }
                let applies = self
                    .removed
                    .iter()
                    .filter_map(|r| live.get(r.as_str()))
                    .any(|r| may_apply(d.entry, r.entry));
                if applies {
                    return Err(conflict());
                }
            }
        }
        Ok(())
    }

    /// The manifests of an attempt on top of `manifests`, the newest
    /// snapshot of the table at `location`: each manifest that holds a
    /// removed data file, or a position delete file of one, written again
    /// (named by `names`) by snapshot `(id, sequence number)`, with the
    /// key-value metadata `meta`; the others kept, but for manifests with
    /// no live file left.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for a manifest of another partition spec to
    /// write again; Avro, IO and store errors.
    pub(crate) fn rewrite(
        &self,
        location: &TableDir,
        layout: &TableLayout,
        manifests: &Manifests,
        snapshot: (i64, i64),
        names: Names<'_>,
        meta: &[(&str, String)],
    ) -> Result<Rewrite, Error> {
        let live = live_entries(manifests);
        // Position delete files whose one data file goes.
        let dangling: BTreeSet<&str> = live
            .iter()
            .filter(|(_, l)| referenced(l.entry).is_some_and(|r| self.removed.contains(r)))
            .map(|(p, _)| *p)
            .collect();
        // Equality delete files that no data file left is older than (in
        // their partition): nothing they delete stays.
        let seq = |l: &Live<'_>| l.entry.sequence_number.unwrap_or(l.line.sequence_number);
        let stale: BTreeSet<&str> = live
            .iter()
            .filter(|(_, d)| d.entry.file.content == Content::EqualityDeletes)
            .filter(|(_, d)| {
                !live.values().any(|l| {
                    l.entry.file.content == Content::Data
                        && !self.removed.contains(&l.entry.file.path)
                        && l.entry.file.partition == d.entry.file.partition
                        && seq(l) < seq(d)
                })
            })
            .map(|(p, _)| *p)
            .collect();
        let goes = |e: &Entry| {
            e.status != Status::Deleted
                && match e.file.content {
                    Content::Data => self.removed.contains(&e.file.path),
                    Content::PositionDeletes => dangling.contains(e.file.path.as_str()),
                    Content::EqualityDeletes => stale.contains(e.file.path.as_str()),
                }
        };
        let mut out = Rewrite {
            kept: Vec::new(),
            lines: Vec::new(),
            counts: Counts::default(),
        };
        for (line, manifest) in manifests {
            for e in manifest
                .entries
                .iter()
                .filter(|e| e.status != Status::Deleted)
            {
                out.counts.count(e, goes(e));
            }
            if !manifest.entries.iter().any(goes) {
                // A manifest of deleted entries alone is left out.
                if line.live_files != Some(0) {
                    out.kept.push(line.raw.clone());
                }
                continue;
            }
            if line.spec_id != 0 {
                return Err(Error::Unsupported(format!(
                    "{}: written with partition spec {}, not the table's",
                    line.path, line.spec_id
                )));
            }
            let rel = format!("metadata/{}-m{}.avro", names.commit, names.next);
            *names.next += 1;
            let (bytes, file) = rewritten(
                location,
                layout,
                (line, manifest),
                &goes,
                &rel,
                snapshot,
                meta,
            )?;
            location.put_new(&rel, &bytes)?;
            names.written.push(rel);
            out.lines.push(file);
        }
        for e in live.values().filter(|l| goes(l.entry)) {
            out.counts
                .partitions
                .insert(format!("{:?}", e.entry.file.partition));
        }
        Ok(out)
    }
}

impl Counts {
    /// Counts live entry `e`, removed (`goes`) or kept.
    fn count(&mut self, e: &Entry, goes: bool) {
        let f = &e.file;
        if goes {
            self.removed_bytes += f.bytes;
        } else {
            self.kept_bytes += f.bytes;
        }
        match (f.content, goes) {
            (Content::Data, true) => {
                self.removed_data_files += 1;
                self.removed_records += f.rows;
            }
            (Content::Data, false) => {
                self.kept_data_files += 1;
                self.kept_records += f.rows;
            }
            (Content::PositionDeletes, true) => {
                self.removed_delete_files += 1;
                self.removed_position_deletes += f.rows;
            }
            (Content::PositionDeletes, false) => {
                self.kept_delete_files += 1;
                self.kept_position_deletes += f.rows;
            }
            (Content::EqualityDeletes, true) => {
                self.removed_delete_files += 1;
                self.removed_equality_delete_files += 1;
                self.removed_equality_deletes += f.rows;
            }
            (Content::EqualityDeletes, false) => {
                self.kept_delete_files += 1;
                self.kept_equality_deletes += f.rows;
            }
        }
    }
}

/// The bytes and the list line of `manifest` written again by snapshot
/// `(id, sequence number)`: entries that `goes` deleted, the other live
/// ones existing, earlier deleted ones left out.
fn rewritten(
    location: &TableDir,
    layout: &TableLayout,
    (line, manifest): (&ListLine, &Manifest),
    goes: &dyn Fn(&Entry) -> bool,
    rel: &str,
    (snapshot_id, sequence_number): (i64, i64),
    meta: &[(&str, String)],
) -> Result<(Vec<u8>, ManifestFile), Error> {
    let mut entries = Vec::with_capacity(manifest.entries.len());
    let mut summaries = Summaries::new(layout.fields.len());
    let mut file = ManifestFile {
        path: location.uri(rel),
        length: 0,
        content: line.content,
        sequence_number,
        min_sequence_number: sequence_number,
        snapshot_id,
        added_files: 0,
        existing_files: 0,
        deleted_files: 0,
        added_rows: 0,
        existing_rows: 0,
        deleted_rows: 0,
        partitions: Vec::new(),
    };
    for e in manifest
        .entries
        .iter()
        .filter(|e| e.status != Status::Deleted)
    {
        let mut e = e.clone();
        e.file.partition = spec_order(&manifest.names, &e.file.partition, layout, &e.file.path)?;
        summaries.add(&e.file.partition);
        if goes(&e) {
            e.status = Status::Deleted;
            e.snapshot_id = Some(snapshot_id);
            file.deleted_files += 1;
            file.deleted_rows += e.file.rows;
        } else {
            e.status = Status::Existing;
            file.existing_files += 1;
            file.existing_rows += e.file.rows;
            if let Some(s) = e.sequence_number {
                file.min_sequence_number = file.min_sequence_number.min(s);
            }
        }
        entries.push(e);
    }
    file.partitions = summaries.binary();
    let mut meta = meta.to_vec();
    meta.push(("content", line.content.name().into()));
    let at = location.at(rel);
    let bytes = avro::manifest(&at, &layout.fields, &entries, snapshot_id, &meta)?;
    file.length = bytes.len() as u64;
    Ok((bytes, file))
}

/// Checks that a replace deletes no rows and that its added files can
/// hold the rows the removed ones still do: between their rows less the
/// deletes that may apply to them, and their rows.
fn check_replace(
    named: &Named<'_>,
    removed: &BTreeSet<String>,
    targets: &[Target],
    live: &BTreeMap<&str, Live<'_>>,
) -> Result<(), Error> {
    let table = named
        .added
        .first()
        .map(|(p, _)| p.clone())
        .or_else(|| removed.first().cloned())
        .unwrap_or_default();
    if !targets.is_empty() {
        return Err(bad_change(
            &table,
            "a replace keeps the table's rows: it deletes none",
        ));
    }
    if removed.is_empty() {
        return Err(bad_change(
            &table,
            "a replace removes the files it rewrites",
        ));
    }
    let mut most = 0u64;
    let mut deleted = 0u64;
    let mut unknown = false;
    for r in removed.iter().filter_map(|r| live.get(r.as_str())) {
        most += r.entry.file.rows;
        for d in live
            .values()
            .filter(|d| d.entry.file.content != Content::Data)
        {
            if !may_apply(d.entry, r.entry) {
                continue;
            }
            match referenced(d.entry) {
                Some(_) => deleted += d.entry.file.rows,
                None => unknown = true,
            }
        }
    }
    let least = if unknown {
        0
    } else {
        most.saturating_sub(deleted)
    };
    let added: u64 = named.added.iter().map(|(_, rows)| rows).sum();
    if added < least || added > most {
        return Err(bad_change(
            &table,
            format!(
                "a replace keeps the table's rows, but its files hold {added} rows where the files it removes hold {}",
                if least == most {
                    least.to_string()
                } else {
                    format!("{least} to {most}")
                }
            ),
        ));
    }
    Ok(())
}

/// The snapshot summary of a change: `operation`, the added data files
/// (`added`: files, rows, bytes) and delete files (`new_deletes`), the
/// removed ones and the totals after, from `counts`; counts of nothing
/// left out, totals always given.
pub(crate) fn summary(
    operation: &str,
    added: (u64, u64, u64),
    added_partitions: &BTreeSet<String>,
    new_deletes: &[Entry],
    counts: &Counts,
) -> Json {
    let (files, rows, bytes) = added;
    let of = |content: Content| {
        new_deletes
            .iter()
            .filter(move |e| e.file.content == content)
    };
    let delete_rows: u64 = of(Content::PositionDeletes).map(|e| e.file.rows).sum();
    let equality_rows: u64 = of(Content::EqualityDeletes).map(|e| e.file.rows).sum();
    let equality_files = of(Content::EqualityDeletes).count() as u64;
    let delete_bytes: u64 = new_deletes.iter().map(|e| e.file.bytes).sum();
    let mut partitions = added_partitions.clone();
    partitions.extend(counts.partitions.iter().cloned());
    partitions.extend(
        new_deletes
            .iter()
            .map(|e| format!("{:?}", e.file.partition)),
    );
    let c = counts;
    let mut m = Map::new();
    m.insert("operation".into(), Json::String(operation.into()));
    let mut put = |key: &str, n: u64, always: bool| {
        if always || n > 0 {
            m.insert(key.into(), Json::String(n.to_string()));
        }
    };
    let new_delete_files = new_deletes.len() as u64;
    put("added-data-files", files, false);
    put("deleted-data-files", c.removed_data_files, false);
    put("added-delete-files", new_delete_files, false);
    put(
        "added-position-delete-files",
        new_delete_files - equality_files,
        false,
    );
    put("added-equality-delete-files", equality_files, false);
    put("removed-delete-files", c.removed_delete_files, false);
    put(
        "removed-position-delete-files",
        c.removed_delete_files - c.removed_equality_delete_files,
        false,
    );
    put(
        "removed-equality-delete-files",
        c.removed_equality_delete_files,
        false,
    );
    put(
        "removed-equality-deletes",
        c.removed_equality_deletes,
        false,
    );
    put("added-records", rows, false);
    put("deleted-records", c.removed_records, false);
    put("added-files-size", bytes + delete_bytes, false);
    put("removed-files-size", c.removed_bytes, false);
    put("added-position-deletes", delete_rows, false);
    put("added-equality-deletes", equality_rows, false);
    put(
        "removed-position-deletes",
        c.removed_position_deletes,
        false,
    );
    put("changed-partition-count", partitions.len() as u64, true);
    put("total-records", c.kept_records + rows, true);
    put(
        "total-files-size",
        c.kept_bytes + bytes + delete_bytes,
        true,
    );
    put("total-data-files", c.kept_data_files + files, true);
    put(
        "total-delete-files",
        c.kept_delete_files + new_delete_files,
        true,
    );
    put(
        "total-position-deletes",
        c.kept_position_deletes + delete_rows,
        true,
    );
    put(
        "total-equality-deletes",
        c.kept_equality_deletes + equality_rows,
        true,
    );
    Json::Object(m)
}

/// The snapshot operation of a change that adds data files (`adds`),
/// removes some or deletes rows (`removes`), marked a rewrite or not.
pub(crate) fn operation(adds: bool, removes: bool, replace: bool) -> &'static str {
    match (adds, removes, replace) {
        (_, _, true) => "replace",
        (_, false, false) => "append",
        (false, true, false) => "delete",
        (true, true, false) => "overwrite",
    }
}
