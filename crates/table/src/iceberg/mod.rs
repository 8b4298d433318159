//! Iceberg format version 2: a table's metadata over data files already
//! written, committed as a new version of a path table (and, through a
//! hook, of a catalog's entry), and the files a snapshot holds, read back
//! from its manifests ([`live_files`]).
//!
//! [`commit`] writes, under `LOCATION/metadata/`, one manifest of the new
//! data files (their partition values, record counts, sizes, column
//! sizes, value and null counts, bounds and split offsets), then the
//! manifest list of the new snapshot (the current snapshot's manifests
//! and the new one) and `vN.metadata.json`, claimed only if absent. When
//! another writer claimed that version first, the list and metadata are
//! built again on top of its version and the next one is claimed. Last,
//! `version-hint.text` moves forward, as Hadoop tables keep it.

mod avro;
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
    Committed, Content, Current, DELETE_FILE_PATH_ID, DELETE_POS_ID, LiveFile, NewTable, SortField,
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
pub fn commit(t: &NewTable<'_>, mut catalog: Option<CatalogHook<'_>>) -> Result<Committed, Error> {
    let layout = TableLayout::new(t.schema, t.partition, t.sort, &t.location.root())?;
    let snapshot_id = random_id();
    let commit_uuid = uuid();
    let mut added = snapshot::Added::of(t, &layout)?;
    let mut cur = current(t.location)?;
    added.set_sort_order(layout.sort_order_id(cur.as_ref().map(|c| &c.metadata)));

    // The manifest of the new files: written once, whatever the retries.
    let manifest_rel = format!("metadata/{commit_uuid}-m0.avro");
    let manifest_path = t.location.at(&manifest_rel);
    let manifest = avro::manifest(
        &manifest_path,
        &layout.fields,
        &added.entries,
        snapshot_id,
        &[
            ("schema", t.schema.json.to_string()),
            ("schema-id", "0".into()),
            ("partition-spec", layout.spec_json.to_string()),
            ("partition-spec-id", "0".into()),
            ("format-version", "2".into()),
            ("content", ManifestContent::Data.name().into()),
        ],
    )?;
    t.location.put_new(&manifest_rel, &manifest)?;

    for attempt in 0..COMMIT_RETRIES {
        if attempt > 0 {
            // Another writer moved the table: build on its version.
            cur = current(t.location)?;
        }
        if let Some(cur) = &cur {
            schema::check_same(&cur.metadata, t.schema, &cur.path)?;
            layout.check_spec(&cur.metadata, &cur.path)?;
        }
        let version = cur.as_ref().map_or(1, |c| c.version + 1);
        let sequence_number = cur
            .as_ref()
            .and_then(|c| c.metadata["last-sequence-number"].as_i64())
            .unwrap_or(0)
            + 1;
        // The manifest list: the current snapshot's manifests, then ours.
        let manifests = match &cur {
            Some(c) => snapshot::current_manifests(t.location, &c.metadata, &c.path)?,
            None => Vec::new(),
        };
        let list_rel = format!(
            "metadata/snap-{snapshot_id}-{}-{commit_uuid}.avro",
            attempt + 1
        );
        let list_path = t.location.at(&list_rel);
        let list = avro::manifest_list(
            &list_path,
            &manifests,
            &[ManifestFile {
                path: text(&manifest_path),
                length: manifest.len() as u64,
                content: ManifestContent::Data,
                sequence_number,
                min_sequence_number: sequence_number,
                snapshot_id,
                added_files: added.entries.len(),
                existing_files: 0,
                deleted_files: 0,
                added_rows: added.rows,
                existing_rows: 0,
                deleted_rows: 0,
                partitions: added.partition_summaries(),
            }],
            &[
                ("snapshot-id", snapshot_id.to_string()),
                (
                    "parent-snapshot-id",
                    cur.as_ref()
                        .and_then(|c| c.metadata["current-snapshot-id"].as_i64())
                        .map_or_else(|| "null".into(), |p| p.to_string()),
                ),
                ("sequence-number", sequence_number.to_string()),
                ("format-version", "2".into()),
            ],
        )?;
        t.location.put_new(&list_rel, &list)?;
        let now = now_ms();
        let metadata = match &cur {
            None => snapshot::new_metadata(t, &layout, &added, snapshot_id, &list_path, now),
            Some(c) => snapshot::next_metadata(
                c,
                snapshot::append_summary(&added, &snapshot::current_summary(&c.metadata)),
                snapshot_id,
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
        match t.location.put_new(&target_rel, &body) {
            Ok(()) => {}
            Err(Error::Store(strata_store::Error::OutputExists { .. })) => {
                // Another writer took this version: build on top of it.
                let _ = t.location.remove(&list_rel);
                continue;
            }
            Err(e) => return Err(e),
        }
        if let Some(hook) = catalog.as_mut() {
            match hook(cur.as_ref().map(|c| c.path.as_path()), &target) {
                Ok(()) => {}
                Err(Error::Conflict { .. }) => {
                    let _ = t.location.remove(&target_rel);
                    let _ = t.location.remove(&list_rel);
                    continue;
                }
                Err(e) => {
                    let _ = t.location.remove(&target_rel);
                    return Err(e);
                }
            }
        }
        advance_hint(t.location, version)?;
        return Ok(Committed {
            metadata: target,
            version,
            snapshot_id,
            rows: added.rows,
            total_rows,
            retries: attempt,
        });
    }
    Err(Error::Conflict {
        path: t.location.root(),
        version: COMMIT_RETRIES as u64,
    })
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
