//! Iceberg format version 2: a table's metadata over data files already
//! written, committed as a new version of a path table (and, through a
//! hook, of a catalog's entry).
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
mod model;
pub mod schema;
mod snapshot;
mod spec;
pub mod values;

use std::path::Path;

use serde_json::Value;
use strata_layout::PartitionField;
use strata_store::output::{write_atomically, write_new};

pub use model::{Committed, Current, NewTable, SortField};
pub use schema::{FIELD_ID_KEY, Primitive, TableSchema};

use crate::{
    Error,
    ids::{now_ms, random_id, uuid},
};
use avro::ManifestFile;
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
pub fn current(location: &Path) -> Result<Option<Current>, Error> {
    if location.join("_delta_log").exists() {
        return Err(bad(
            location,
            "holds a Delta table (_delta_log/), not an Iceberg table",
        ));
    }
    let dir = location.join("metadata");
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io("list", &dir, e)),
    };
    let mut newest: Option<u64> = None;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(n) = name
            .strip_prefix('v')
            .and_then(|r| r.strip_suffix(".metadata.json"))
            .and_then(|n| n.parse::<u64>().ok())
        {
            newest = Some(newest.map_or(n, |m| m.max(n)));
        }
    }
    let Some(version) = newest else {
        if dir.join("version-hint.text").exists() {
            return Err(bad(
                &dir,
                "has version-hint.text but no vN.metadata.json: the table's metadata is missing",
            ));
        }
        return Ok(None);
    };
    let path = dir.join(format!("v{version}.metadata.json"));
    let body = std::fs::read(&path).map_err(|e| Error::io("read", &path, e))?;
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
    location: &Path,
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
    let metadata_dir = t.location.join("metadata");
    std::fs::create_dir_all(&metadata_dir)
        .map_err(|e| Error::io("create the metadata directory", &metadata_dir, e))?;
    let layout = TableLayout::new(t.schema, t.partition, t.sort, t.location)?;
    let snapshot_id = random_id();
    let commit_uuid = uuid();
    let mut added = snapshot::Added::of(t, &layout)?;
    let mut cur = current(t.location)?;
    added.set_sort_order(layout.sort_order_id(cur.as_ref().map(|c| &c.metadata)));

    // The manifest of the new files: written once, whatever the retries.
    let manifest_path = metadata_dir.join(format!("{commit_uuid}-m0.avro"));
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
            ("content", "data".into()),
        ],
    )?;
    write_atomically(&manifest_path, &manifest, false, true)?;

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
            Some(c) => snapshot::current_manifests(&c.metadata, &c.path)?,
            None => Vec::new(),
        };
        let list_path = metadata_dir.join(format!(
            "snap-{snapshot_id}-{}-{commit_uuid}.avro",
            attempt + 1
        ));
        let list = avro::manifest_list(
            &list_path,
            &manifests,
            &ManifestFile {
                path: text(&manifest_path),
                length: manifest.len() as u64,
                sequence_number,
                snapshot_id,
                files: added.entries.len(),
                rows: added.rows,
                partitions: added.partition_summaries(),
            },
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
        write_atomically(&list_path, &list, false, true)?;
        let now = now_ms();
        let (metadata, total_rows) = match &cur {
            None => snapshot::new_metadata(t, &layout, &added, snapshot_id, &list_path, now),
            Some(c) => snapshot::appended_metadata(
                c,
                &added,
                snapshot_id,
                sequence_number,
                &list_path,
                now,
            ),
        };
        let target = metadata_dir.join(format!("v{version}.metadata.json"));
        let body = serde_json::to_vec_pretty(&metadata).map_err(|e| bad(&target, e.to_string()))?;
        match write_new(&target, &body, true) {
            Ok(_) => {}
            Err(strata_store::Error::OutputExists { .. }) => {
                // Another writer took this version: build on top of it.
                let _ = std::fs::remove_file(&list_path);
                continue;
            }
            Err(e) => return Err(e.into()),
        }
        if let Some(hook) = catalog.as_mut() {
            match hook(cur.as_ref().map(|c| c.path.as_path()), &target) {
                Ok(()) => {}
                Err(Error::Conflict { .. }) => {
                    let _ = std::fs::remove_file(&target);
                    let _ = std::fs::remove_file(&list_path);
                    continue;
                }
                Err(e) => {
                    let _ = std::fs::remove_file(&target);
                    return Err(e);
                }
            }
        }
        advance_hint(&metadata_dir, version)?;
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
        path: t.location.to_path_buf(),
        version: COMMIT_RETRIES as u64,
    })
}

/// Moves `version-hint.text` to `version` unless it already names a later
/// one (a hint that lags names an older, complete version).
fn advance_hint(metadata_dir: &Path, version: u64) -> Result<(), Error> {
    let hint = metadata_dir.join("version-hint.text");
    let now = std::fs::read_to_string(&hint)
        .ok()
        .and_then(|t| t.trim().parse::<u64>().ok());
    if now.is_some_and(|n| n >= version) {
        return Ok(());
    }
    write_atomically(&hint, version.to_string().as_bytes(), true, true)?;
    Ok(())
}
