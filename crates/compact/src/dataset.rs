//! A dataset: a directory or object-store prefix ([`Dataset`]) of Parquet
//! files, each sorted by the same key columns, and a manifest
//! ([`crate::storage::manifest`]) listing them with their key bounds.
//!
//! The manifest (`_strata_manifest.json`) is versioned and replaced in
//! one step (a synced temporary renamed over the old one, or one object
//! `PUT`). It is the dataset's commit point: a reader that loads it sees
//! one generation whole. Files a compaction writes are named
//! `part-GENERATION-N.parquet`; files the manifest does not list (left by
//! a run that stopped) are removed by the next run, as are strata's
//! temporaries.
//!
//! # Executing a compaction
//!
//! [`execute`]: merge the picked files into new ones (each written to a
//! temporary, then renamed; on an object store, merged in a local scratch
//! directory and uploaded) -> replace the manifest -> remove the replaced
//! files. A failure at any step leaves a manifest whose files all exist
//! and whose rows are exactly the rows before.

use std::path::{Path, PathBuf};

use strata_row::{RowEncoder, Rows, SortField};
use strata_sort::merge::{
    MergeConfig, MergedFile, encode_keys, for_each_key_batch, key_columns, merge_files, not_sorted,
};

use crate::{
    Error, Step,
    planner::{Plan, PlannerOptions, plan},
    rowsets::RowsetInput,
    storage::{
        Dataset,
        manifest::{FORMAT_VERSION, FileEntry, Manifest, from_hex, to_hex},
    },
};

/// Builds a manifest for the Parquet files of `ds` (every `*.parquet`
/// not starting with `.`), sorted by `key`. Each file's key bounds come
/// from its footer's statistics: the tuple of the key columns' smallest
/// values (null for a column with nulls, as nulls order first) and the
/// tuple of their largest; every row's key lies between them. A file whose
/// key columns lack exact statistics (or are floating point, whose
/// statistics leave out NaN) has its key columns read for its first and
/// last rows' keys instead. With `verify`, every file's key columns are
/// read and each key is checked to be in order (the bounds are then the
/// first and last keys). Writes the manifest and returns it.
///
/// # Errors
///
/// [`Error::Invalid`] for an existing manifest, no files, a missing
/// key column, differing schemas, or (with `verify`) an unsorted file.
pub fn init(ds: &Dataset, key: &[String], verify: bool) -> Result<Manifest, Error> {
    if key.is_empty() {
        return Err(Error::Invalid("name at least one key column".into()));
    }
    if ds.read_manifest()?.is_some() {
        return Err(Error::Invalid(format!(
            "{} already has a manifest",
            ds.display()
        )));
    }
    let listed: Vec<(String, u64)> = ds
        .list()?
        .into_iter()
        .filter(|(n, _)| n.ends_with(".parquet") && !n.starts_with('.'))
        .collect();
    if listed.is_empty() {
        return Err(Error::Invalid(format!(
            "{} has no .parquet files",
            ds.display()
        )));
    }
    let mut files = Vec::with_capacity(listed.len());
    for (name, bytes) in listed {
        let from_stats = if verify {
            None
        } else {
            let (md, schema) = ds.parquet_footer(&name)?;
            // Statistics a decoder panics on are not used: the keys are
            // read instead.
            strata_parquet::guard::catch(|| statistics_bounds(&md, &schema, key))
                .unwrap_or(Ok(None))
                .map_err(|e| Error::Invalid(format!("{}: {e}", ds.file_display(&name))))?
        };
        let (rows, min_key, max_key) = match from_stats {
            Some(b) => b,
            None => bounds(ds, &name, key, verify)?,
        };
        files.push(FileEntry {
            name,
            rows,
            bytes,
            min_key: to_hex(&min_key),
            max_key: to_hex(&max_key),
        });
    }
    let m = Manifest {
        format: FORMAT_VERSION,
        generation: 1,
        key: key.to_vec(),
        files,
        obsolete: Vec::new(),
    };
    m.write(ds)?;
    Ok(m)
}

/// A file's rows and the encoded keys that bound its keys.
type Bounds = (u64, Vec<u8>, Vec<u8>);

/// Rows and key bounds of a file from its footer: per key column the
/// smallest and largest value over the row groups' statistics, encoded
/// alone and concatenated (a strata-row key is its columns' encodings one
/// after another). `None` when some key column has no exact statistics in
/// some row group, or is floating point.
fn statistics_bounds(
    md: &parquet::file::metadata::ParquetMetaData,
    schema: &arrow_schema::Schema,
    key: &[String],
) -> Result<Option<Bounds>, Error> {
    use arrow_array::{Array, new_null_array};
    use arrow_schema::DataType;
    use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
    let groups = md.row_groups();
    let rows = groups.iter().map(|g| g.num_rows().max(0) as u64).sum();
    let (mut lo, mut hi) = (Vec::new(), Vec::new());
    for k in key {
        let field = schema
            .field_with_name(k)
            .map_err(|_| Error::Invalid(format!("the file has no key column '{k}'")))?;
        if matches!(
            field.data_type(),
            DataType::Float16 | DataType::Float32 | DataType::Float64
        ) {
            return Ok(None);
        }
        let Ok(conv) = StatisticsConverter::try_new(k, schema, md.file_metadata().schema_descr())
        else {
            return Ok(None);
        };
        // A missing null count must not read as "no nulls".
        let conv = conv.with_missing_null_counts_as_zero(false);
        let (Ok(mins), Ok(maxes), Ok(min_exact), Ok(max_exact), Ok(nulls)) = (
            conv.row_group_mins(groups),
            conv.row_group_maxes(groups),
            conv.row_group_is_min_value_exact(groups),
            conv.row_group_is_max_value_exact(groups),
            conv.row_group_null_counts(groups),
        ) else {
            return Ok(None);
        };
        // Statistics that do not come back as the key column's type (such
        // as a dictionary column's values) are not used.
        let Ok(encoder) = RowEncoder::new(vec![SortField::new(field.data_type().clone())]) else {
            return Ok(None);
        };
        let encode = |a: &arrow_array::ArrayRef| encoder.encode(std::slice::from_ref(a)).ok();
        let (Some(mins_rows), Some(maxes_rows), Some(null_row)) = (
            encode(&mins),
            encode(&maxes),
            encode(&new_null_array(field.data_type(), 1)),
        ) else {
            return Ok(None);
        };
        let null = null_row.row(0).as_bytes().to_vec();
        let (mut col_lo, mut col_hi): (Option<Vec<u8>>, Option<Vec<u8>>) = (None, None);
        for (g, meta) in groups.iter().enumerate() {
            let n = meta.num_rows().max(0) as u64;
            if nulls.is_null(g) {
                return Ok(None);
            }
            let null_count = nulls.value(g);
            if null_count > 0 {
                col_lo = Some(null.clone());
            }
            if null_count >= n {
                continue; // no values, only nulls
            }
            let exact = |a: &arrow_array::BooleanArray| a.is_valid(g) && a.value(g);
            if mins.is_null(g) || maxes.is_null(g) || !exact(&min_exact) || !exact(&max_exact) {
                return Ok(None);
            }
            let (m, x) = (mins_rows.row(g).as_bytes(), maxes_rows.row(g).as_bytes());
            if col_lo.as_deref().is_none_or(|l| m < l) {
                col_lo = Some(m.to_vec());
            }
            if col_hi.as_deref().is_none_or(|h| x > h) {
                col_hi = Some(x.to_vec());
            }
        }
        // A column of nulls only: both bounds are null.
        lo.extend(col_lo.unwrap_or_else(|| null.clone()));
        hi.extend(col_hi.unwrap_or(null));
    }
    Ok(Some((rows, lo, hi)))
}

/// Rows and first/last encoded keys of a sorted file; with `verify`, also
/// checks every row is not below the one before.
fn bounds(ds: &Dataset, name: &str, key: &[String], verify: bool) -> Result<Bounds, Error> {
    let display = ds.file_display(name);
    let mut first: Option<Vec<u8>> = None;
    let mut last: Vec<u8> = Vec::new();
    let mut each = |keys: &Rows| -> Result<(), Error> {
        let n = keys.num_rows();
        if n == 0 {
            return Ok(());
        }
        if verify {
            // Each row against the one before, the first against the last
            // row of the batch before.
            let behind = first.is_some() && keys.row(0).as_bytes() < last.as_slice();
            if behind || (1..n).any(|i| keys.row(i).as_bytes() < keys.row(i - 1).as_bytes()) {
                return Err(not_sorted(Path::new(&display), key).into());
            }
        }
        if first.is_none() {
            first = Some(keys.row(0).as_bytes().to_vec());
        }
        last = keys.row(n - 1).as_bytes().to_vec();
        Ok(())
    };
    let rows = match ds.dir() {
        Some(dir) => for_each_key_batch(&dir.join(name), key, 8192, |keys, _| {
            each(keys)?;
            Ok::<_, Error>(true)
        })?,
        None => {
            let mut rows = 0u64;
            let mut encoder = None;
            ds.scan_columns(name, key, &mut |b| {
                if encoder.is_none() {
                    encoder = Some(key_columns(&b.schema(), key)?);
                }
                let enc = encoder
                    .as_ref()
                    .ok_or_else(|| Error::Invalid("no key encoder".into()))?;
                each(&encode_keys(enc, b)?)?;
                rows += b.num_rows() as u64;
                Ok(())
            })?;
            rows
        }
    };
    Ok((rows, first.unwrap_or_default(), last))
}

/// What [`execute`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Executed {
    /// The new manifest.
    pub manifest: Manifest,
    /// Names of the replaced files.
    pub replaced: Vec<String>,
    /// The files written.
    pub written: Vec<MergedFile>,
}

/// Removes files of `ds` that `manifest` does not list and strata wrote
/// (`part-*.parquet`) or the manifest marks obsolete, and strata's
/// temporaries: what a stopped run left. Returns the names removed. Not
/// for use while a compaction of `ds` runs: its unfinished outputs look
/// the same ([`execute`] calls this holding the dataset's lock).
pub fn remove_leftovers(ds: &Dataset, manifest: &Manifest) -> Vec<String> {
    ds.list()
        .map(|names| remove_leftovers_among(ds, manifest, &names))
        .unwrap_or_default()
}

/// [`remove_leftovers`] over a listing of `ds` already made.
fn remove_leftovers_among(
    ds: &Dataset,
    manifest: &Manifest,
    names: &[(String, u64)],
) -> Vec<String> {
    let listed: std::collections::HashSet<&str> =
        manifest.files.iter().map(|f| f.name.as_str()).collect();
    let mut removed = Vec::new();
    for (name, _) in names {
        let ours = (name.starts_with("part-") && name.ends_with(".parquet"))
            || (name.starts_with('.') && name.ends_with(".strata-tmp"))
            || manifest.obsolete.contains(name);
        if ours && !listed.contains(name.as_str()) && ds.remove(name).is_ok() {
            removed.push(name.clone());
        }
    }
    removed
}

/// Merges the manifest's files at indices `picked` into files of about
/// `target_file_bytes`, swaps the manifest, then removes the replaced
/// files. `hook` is called at each [`Step`]; an error from it stops the
/// run there, as a crash would.
///
/// # Errors
///
/// As [`merge_files`] and [`Manifest::store`]; [`Error::Invalid`]
/// for an index out of range.
pub fn execute(
    ds: &Dataset,
    picked: &[usize],
    target_file_bytes: u64,
    hook: &dyn Fn(Step) -> Result<(), Error>,
) -> Result<Executed, Error> {
    // Held to the end: another run's leftover-removal would delete this
    // run's outputs.
    let _lock = ds.lock()?;
    let manifest = Manifest::read(ds)?;
    let names = ds.list()?;
    remove_leftovers_among(ds, &manifest, &names);
    if let Some(&i) = picked.iter().find(|&&i| i >= manifest.files.len()) {
        return Err(Error::Invalid(format!(
            "file index {i} is out of range: the dataset has {} files",
            manifest.files.len()
        )));
    }
    let mut picked = picked.to_vec();
    picked.sort_unstable();
    picked.dedup();
    hook(Step::Start)?;
    let replaced: Vec<String> = picked
        .iter()
        .map(|&i| manifest.files[i].name.clone())
        .collect();
    // An object-store dataset is merged in a local scratch directory.
    let scratch = match ds.dir() {
        Some(_) => None,
        None => {
            Some(tempfile::tempdir().map_err(|e| Error::io("create", &std::env::temp_dir(), e))?)
        }
    };
    let scratch_path = scratch
        .as_ref()
        .map_or_else(PathBuf::new, |t| t.path().to_path_buf());
    let inputs = ds.stage(&replaced, &scratch_path)?;
    // Above the manifest's generation and every part file's (a dataset
    // initialised again over compacted files lists `part-` files of later
    // generations than its own), so an output never takes a live name.
    let generation = names
        .iter()
        .filter_map(|(n, _)| {
            n.strip_prefix("part-")?
                .split('-')
                .next()?
                .parse::<u64>()
                .ok()
        })
        .fold(manifest.generation, u64::max)
        + 1;
    let cfg = MergeConfig {
        key: manifest.key.clone(),
        target_file_bytes: target_file_bytes.max(1),
        batch_rows: 8192,
        threads: 0,
        ..MergeConfig::default()
    };
    let mut written = merge_files(
        &inputs,
        &ds.out_dir(&scratch_path),
        &|n| format!("part-{generation:06}-{n:08}.parquet"),
        &cfg,
    )?;
    let names: Vec<String> = written
        .iter()
        .map(|w| {
            w.path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .collect();
    let fail = |e: Error| {
        for n in &names {
            let _ = ds.remove(n);
        }
        e
    };
    let paths: Vec<PathBuf> = written.iter().map(|w| w.path.clone()).collect();
    ds.publish(&paths).map_err(fail)?;
    if ds.dir().is_none() {
        for (w, n) in written.iter_mut().zip(&names) {
            w.path = PathBuf::from(ds.file_display(n));
        }
    }
    drop(scratch);
    hook(Step::Merged).map_err(fail)?;
    let mut files: Vec<FileEntry> = manifest
        .files
        .iter()
        .enumerate()
        .filter(|(i, _)| picked.binary_search(i).is_err())
        .map(|(_, f)| f.clone())
        .collect();
    for (w, name) in written.iter().zip(&names) {
        files.push(FileEntry {
            name: name.clone(),
            rows: w.rows,
            bytes: w.bytes,
            min_key: to_hex(&w.min_key),
            max_key: to_hex(&w.max_key),
        });
    }
    let next = Manifest {
        format: FORMAT_VERSION,
        generation,
        key: manifest.key.clone(),
        files,
        obsolete: replaced.clone(),
    };
    // A failed write keeps the outputs: the store may have taken the new
    // manifest after all (an error on the last retry), and then it names
    // them. If it did not, the next run removes them as leftovers.
    next.write(ds)?;
    hook(Step::Committed)?;
    for name in &replaced {
        let _ = ds.remove(name);
    }
    hook(Step::Done)?;
    Ok(Executed {
        manifest: next,
        replaced,
        written,
    })
}

/// The manifest's files as planner inputs: input `i` is file `i`, its
/// bytes and its encoded key bounds (which order like the keys).
///
/// # Errors
///
/// [`Error::Invalid`] for a bound that is not hex, or a file whose
/// smallest key sorts after its largest.
pub fn rowsets(manifest: &Manifest) -> Result<Vec<RowsetInput>, Error> {
    manifest
        .files
        .iter()
        .map(|f| {
            let (min, max) = (from_hex(&f.min_key)?, from_hex(&f.max_key)?);
            if min > max {
                return Err(Error::Invalid(format!(
                    "the manifest's entry for {}: its min_key sorts after its max_key",
                    f.name
                )));
            }
            Ok(RowsetInput::new(f.bytes, min, max))
        })
        .collect()
}

/// Plans a compaction of the dataset in `dir`.
///
/// # Errors
///
/// As [`Manifest::load`] and [`rowsets`].
pub fn plan_dataset(ds: &Dataset, opts: &PlannerOptions) -> Result<(Manifest, Plan), Error> {
    let manifest = Manifest::read(ds)?;
    let p = plan(&rowsets(&manifest)?, opts);
    Ok((manifest, p))
}

/// Plans a compaction of `dir` and, when the plan picks anything,
/// executes it ([`execute`]). Returns the plan and what was done.
///
/// # Errors
///
/// As [`plan_dataset`] and [`execute`].
pub fn run(
    ds: &Dataset,
    opts: &PlannerOptions,
    target_file_bytes: u64,
    hook: &dyn Fn(Step) -> Result<(), Error>,
) -> Result<(Plan, Option<Executed>), Error> {
    let (manifest, p) = plan_dataset(ds, opts)?;
    if p.picked.is_empty() {
        // Clean up after a stopped run, unless a compaction is running
        // (its outputs look like leftovers until it commits).
        if let Ok(_lock) = ds.lock() {
            remove_leftovers(ds, &manifest);
        }
        return Ok((p, None));
    }
    let picked: Vec<usize> = p.picked.iter().map(|&i| i as usize).collect();
    let done = execute(ds, &picked, target_file_bytes, hook)?;
    Ok((p, Some(done)))
}
