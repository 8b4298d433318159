//! Files a table does not reference: what a killed or failed run leaves
//! behind (data files it wrote before it was stopped, an Iceberg manifest
//! of a commit that never landed, strata's temporaries), found and
//! removed.
//!
//! A file is an orphan when the table's current version does not reach
//! it ([`crate::iceberg::referenced`], [`crate::delta::referenced`]), it
//! is not protected (a staged part's files), and it is older than the
//! minimum age: a writer that is still running has files no version
//! names yet, so only files older than any run in flight may go. A
//! temporary of strata's whose process is gone goes at any age. Only the
//! table's own directories are looked at: Iceberg's `data/` and the
//! manifests (`*.avro`) of `metadata/`; a Delta table's root outside
//! `_delta_log/` and other directories whose name starts with `_` or
//! `.`.

use std::collections::BTreeSet;

use strata_store::output::is_stale_temporary;

use crate::{Error, delta, dir::TableDir, iceberg, ids::now_ms};

/// A file no version of the table reaches, or a temporary directory of
/// a writer that is gone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Orphan {
    /// Its path relative to the table.
    pub path: String,
    /// Whether it is a directory (removed with all it holds).
    pub dir: bool,
    /// Its size.
    pub bytes: u64,
    /// Its last modification, in milliseconds since the epoch.
    pub modified_ms: i64,
}

/// What [`find`] found.
#[derive(Debug, Clone)]
pub struct Found {
    /// The table's format: `iceberg` or `delta`.
    pub format: &'static str,
    /// Files the table references.
    pub referenced: usize,
    /// Orphans old enough to remove.
    pub orphans: Vec<Orphan>,
    /// Orphans younger than the minimum age, kept (a run in flight may
    /// still commit them).
    pub young: Vec<Orphan>,
}

/// The orphans of the table at `location`: files it does not reference,
/// outside `protected`, modified at least `min_age_ms` ago (stale
/// temporaries at any age).
///
/// # Errors
/// [`Error::BadTable`] when `location` holds no table or its metadata
/// does not read; IO or store errors.
pub fn find(
    location: &TableDir,
    protected: &BTreeSet<String>,
    min_age_ms: i64,
) -> Result<Found, Error> {
    let (format, referenced) = if location.has_dir(delta::LOG_DIR)? {
        ("delta", delta::referenced(location)?)
    } else {
        ("iceberg", iceberg::referenced(location)?)
    };
    let referenced = referenced.ok_or_else(|| Error::BadTable {
        path: location.root(),
        reason: "holds no Iceberg or Delta table".into(),
    })?;
    let candidates = match format {
        "iceberg" => {
            let mut all = location.list_all("data")?;
            all.extend(
                location
                    .list_all("metadata")?
                    .into_iter()
                    .filter(|(p, ..)| p.ends_with(".avro") || is_temporary(p)),
            );
            all
        }
        _ => location
            .list_all("")?
            .into_iter()
            .filter(|(p, ..)| {
                let parts: Vec<&str> = p.split('/').collect();
                let (name, dirs) = parts.split_last().unwrap_or((&"", &[]));
                !dirs
                    .iter()
                    .any(|d| d.starts_with('_') || d.starts_with('.'))
                    && (!(name.starts_with('_') || name.starts_with('.')) || is_temporary(p))
            })
            .collect(),
    };
    let now = now_ms();
    let (mut orphans, mut young) = (Vec::new(), Vec::new());
    // A killed run's temporary directories (where its partitions were
    // being written), whole, empty subdirectories and all.
    let top = if format == "iceberg" { "data" } else { "" };
    let temp_dirs = location.dirs_in(top, is_stale_temporary)?;
    for d in &temp_dirs {
        let inside = location.list_all(d)?;
        orphans.push(Orphan {
            path: d.clone(),
            dir: true,
            bytes: inside.iter().map(|(_, b, _)| b).sum(),
            modified_ms: inside.iter().map(|(.., m)| *m).max().unwrap_or(0),
        });
    }
    for (path, bytes, modified_ms) in candidates {
        if referenced.contains(&path)
            || protected.contains(&path)
            || temp_dirs.iter().any(|d| path.starts_with(&format!("{d}/")))
        {
            continue;
        }
        let orphan = Orphan {
            path,
            dir: false,
            bytes,
            modified_ms,
        };
        if is_temporary(&orphan.path) || now - modified_ms >= min_age_ms {
            orphans.push(orphan);
        } else {
            young.push(orphan);
        }
    }
    Ok(Found {
        format,
        referenced: referenced.len(),
        orphans,
        young,
    })
}

/// Whether the file at `path` is, or lies in, a temporary of strata's
/// whose process is gone.
fn is_temporary(path: &str) -> bool {
    path.split('/').any(is_stale_temporary)
}

/// Removes `orphans` from the table at `location`.
///
/// # Errors
/// IO or store errors (the files before the failing one are gone).
pub fn remove(location: &TableDir, orphans: &[Orphan]) -> Result<(), Error> {
    let mut dirs = BTreeSet::new();
    for o in orphans {
        if o.dir {
            location.remove_tree(&o.path)?;
        } else {
            location.remove(&o.path)?;
        }
        let mut at = o.path.as_str();
        while let Some((parent, _)) = at.rsplit_once('/') {
            dirs.insert(parent.to_string());
            at = parent;
        }
    }
    // Directories the removals emptied (a killed run's temporary
    // directory, a partition of orphans only) go too, deepest first; the
    // table's own `data` and `metadata` stay.
    let mut dirs: Vec<String> = dirs.into_iter().collect();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.matches('/').count()));
    for d in dirs
        .iter()
        .filter(|d| !matches!(d.as_str(), "data" | "metadata"))
    {
        location.remove_empty_dir(d);
    }
    Ok(())
}
