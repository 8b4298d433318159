//! The files a snapshot holds: its manifest list's lines, each manifest's
//! entries, and of those the live ones (added or existing, data and
//! delete files alike) as [`LiveFile`]s, their bounds decoded by the
//! types of the snapshot's schema.

use std::{collections::BTreeMap, path::Path};

use serde_json::Value;

use super::{
    avro::{Entry, Status},
    model::{Content, DELETE_FILE_PATH_ID, DELETE_POS_ID, LiveFile},
    read::{self, ListLine, Manifest},
    schema::{Primitive, TableSchema},
    values::bound_of_bytes,
};
use crate::{Error, dir::TableDir};

/// A snapshot's manifests: each one's line in the list, and its entries.
pub(crate) type Manifests = Vec<(ListLine, Manifest)>;

/// The snapshot `id` of `metadata` (read from `at`), or its current one
/// when `id` is `None`; `None` for a table without a current snapshot.
///
/// # Errors
/// [`Error::BadTable`] when a snapshot asked for, or the current one, is
/// not among the snapshots.
pub(crate) fn snapshot<'m>(
    metadata: &'m Value,
    at: &Path,
    id: Option<i64>,
) -> Result<Option<&'m Value>, Error> {
    let Some(id) = id.or_else(|| metadata["current-snapshot-id"].as_i64().filter(|&i| i >= 0))
    else {
        return Ok(None);
    };
    metadata["snapshots"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["snapshot-id"].as_i64() == Some(id)))
        .map(Some)
        .ok_or_else(|| Error::BadTable {
            path: at.to_path_buf(),
            reason: format!("snapshot {id} is not among the table's snapshots"),
        })
}

/// The manifests of `snapshot` (a snapshot of the table at `location`,
/// whose metadata file is `at`).
///
/// # Errors
/// [`Error::BadTable`] for a snapshot without a manifest list;
/// [`Error::Avro`] for a list or manifest that does not read; IO or
/// store errors, a missing file too.
pub(crate) fn manifests(
    location: &TableDir,
    snapshot: &Value,
    at: &Path,
) -> Result<Manifests, Error> {
    let list = snapshot["manifest-list"]
        .as_str()
        .ok_or_else(|| Error::BadTable {
            path: at.to_path_buf(),
            reason: format!(
                "snapshot {} has no manifest list (a format version 1 table's inline manifests are not read)",
                snapshot["snapshot-id"]
            ),
        })?;
    let bytes = location.read_location(list)?;
    let mut out = Vec::new();
    for line in read::list_lines(&bytes, Path::new(list))? {
        let bytes = location.read_location(&line.path)?;
        let manifest = read::manifest(&bytes, Path::new(&line.path), &line)?;
        out.push((line, manifest));
    }
    Ok(out)
}

/// The column types of the schema `snapshot` of `metadata` was written
/// with (the current schema when it names none); columns of a type not
/// read here are left out, their bounds not decoded.
pub(crate) fn column_types(metadata: &Value, snapshot: Option<&Value>) -> BTreeMap<i32, Primitive> {
    let id = snapshot
        .and_then(|s| s["schema-id"].as_i64())
        .or_else(|| metadata["current-schema-id"].as_i64())
        .unwrap_or(0);
    metadata["schemas"]
        .as_array()
        .and_then(|s| {
            s.iter()
                .find(|s| s["schema-id"].as_i64().unwrap_or(0) == id)
        })
        .and_then(|s| TableSchema::from_json(s).ok())
        .map(|s| s.primitives)
        .unwrap_or_default()
}

/// The live files of `manifests`, in the manifests' order.
pub(crate) fn live_files(manifests: &Manifests, types: &BTreeMap<i32, Primitive>) -> Vec<LiveFile> {
    let mut out = Vec::new();
    for (line, manifest) in manifests {
        for e in &manifest.entries {
            if e.status != Status::Deleted {
                out.push(live_file(e, line, manifest, types));
            }
        }
    }
    out
}

/// The live file of entry `e` of `manifest`.
fn live_file(
    e: &Entry,
    line: &ListLine,
    manifest: &Manifest,
    types: &BTreeMap<i32, Primitive>,
) -> LiveFile {
    let f = &e.file;
    let type_of = |id: i32| match (f.content, id) {
        (Content::PositionDeletes, DELETE_FILE_PATH_ID) => Some(Primitive::String),
        (Content::PositionDeletes, DELETE_POS_ID) => Some(Primitive::Long),
        _ => types.get(&id).copied(),
    };
    let decode = |bounds: &[(i32, Vec<u8>)]| {
        bounds
            .iter()
            .filter_map(|(id, b)| Some((*id, bound_of_bytes(type_of(*id)?, b)?)))
            .collect()
    };
    LiveFile {
        path: f.path.clone(),
        content: f.content,
        partition: manifest
            .names
            .iter()
            .cloned()
            .zip(f.partition.iter().cloned())
            .collect(),
        spec_id: line.spec_id,
        record_count: f.rows,
        file_size: f.bytes,
        sequence_number: e.sequence_number.unwrap_or(line.sequence_number),
        file_sequence_number: e.file_sequence_number.unwrap_or(line.sequence_number),
        snapshot_id: e.snapshot_id.unwrap_or(line.snapshot_id),
        lower: decode(&f.lower),
        upper: decode(&f.upper),
        null_counts: f.null_counts.iter().copied().collect(),
        equality_ids: f.equality_ids.clone(),
        sort_order_id: f.sort_order_id,
        manifest: line.path.clone(),
    }
}
