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
//! temporaries and hidden outputs.
//!
//! # Executing a compaction
//!
//! [`execute`]: merge the picked files into new ones under hidden names
//! (`.part-GENERATION-N.parquet.strata-new`, which no `*.parquet` glob
//! matches; on an object store, merged in a local scratch directory and
//! uploaded under their final names) -> the switch: the new manifest is
//! written to a synced temporary, the outputs are renamed to their final
//! names, the temporary is renamed over the manifest and the replaced
//! files are renamed to hidden names (`.NAME.strata-old`), one rename
//! after another with no other IO between them -> the directory is
//! synced, making all of those renames durable together -> the hidden
//! replaced files are removed. A failure or kill at any step, or a machine
//! crash that keeps some of the renames and not others, leaves a manifest
//! whose rows are exactly the rows before (or after): the next run puts
//! back under its listed name any listed file found only under its hidden
//! name, then removes what is left. A `*.parquet` glob sees the old files
//! or the new ones except inside the switch, a few renames long, where it
//! may see both; on an object store, which has no rename, that
//! window spans the uploads' completion, the manifest `PUT` and the
//! removals. Readers that must be exact read the files the manifest
//! lists.

use std::{
    path::{Path, PathBuf},
    sync::{Arc, atomic::AtomicU64},
};

use arrow_schema::SortOptions;
use strata_row::{KeyColumns, RowEncoder, Rows, SortField};
use strata_sort::merge::{MergeConfig, MergedFile, merge_files, not_sorted};

use crate::{
    Error, Step,
    planner::{Plan, PlannerOptions, plan},
    rowsets::RowsetInput,
    storage::{
        Dataset,
        manifest::{FileEntry, KeyOrder, Manifest, from_hex, to_hex},
    },
};

/// Suffix of a compaction's output until the switch makes it visible.
pub const HIDDEN_SUFFIX: &str = ".strata-new";

/// Suffix of a replaced file between the switch and its removal.
pub const RETIRED_SUFFIX: &str = ".strata-old";

/// The hidden name a compaction writes output `name` under.
fn hidden_name(name: &str) -> String {
    format!(".{name}{HIDDEN_SUFFIX}")
}

/// The hidden name a replaced file `name` waits under for its removal.
fn retired_name(name: &str) -> String {
    format!(".{name}{RETIRED_SUFFIX}")
}

/// Whether `name` is a data file: visible (not starting with `.`) and
/// named `*.parquet`, as a glob over the dataset matches it.
fn is_data_file(name: &str) -> bool {
    name.ends_with(".parquet") && !name.starts_with('.')
}

/// A dataset's key: column names and their orders, from
/// `COL[:asc|:desc][:nulls_first|:nulls_last]` terms.
///
/// # Errors
///
/// [`Error::Invalid`] for no columns, a bad term or a column named twice.
pub fn parse_key(key: &[String]) -> Result<(Vec<String>, Vec<KeyOrder>), Error> {
    if key.is_empty() {
        return Err(Error::Invalid("name at least one key column".into()));
    }
    let mut names = Vec::with_capacity(key.len());
    let mut order = Vec::with_capacity(key.len());
    for term in key {
        let k: strata_sort::SortKey = term
            .parse()
            .map_err(|e: strata_sort::Error| Error::Invalid(format!("key '{term}': {e}")))?;
        if names.contains(&k.column) {
            return Err(Error::Invalid(format!(
                "key column '{}' is named twice",
                k.column
            )));
        }
        names.push(k.column);
        order.push(KeyOrder::from(k.options));
    }
    Ok((names, order))
}

/// How [`init_with`] builds a manifest.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InitOptions {
    /// Read every file's key columns and check their order.
    pub verify: bool,
    /// Replace an existing manifest (see [`init_with`]).
    pub force: bool,
}

/// Builds a manifest for the Parquet files of `ds` (every `*.parquet`
/// not starting with `.`), sorted by `key`
/// (`COL[:asc|:desc][:nulls_first|:nulls_last]` terms, most significant
/// first). Each file's key bounds come from its footer's statistics: per
/// key column the smallest and largest value in its order (a null where
/// the column has nulls and they order there); every row's key lies
/// between them. A file whose key columns lack exact statistics (or are
/// floating point, whose statistics leave out NaN) has its key columns
/// read for its first and last rows' keys instead. With `verify`, every
/// file's key columns are read and each key is checked to be in order
/// (the bounds are then the first and last keys). Writes the manifest and
/// returns it.
///
/// # Errors
///
/// [`Error::Invalid`] for an existing manifest, no files, a bad or
/// missing key column, differing schemas, or (with `verify`) an unsorted
/// file.
pub fn init(ds: &Dataset, key: &[String], verify: bool) -> Result<Manifest, Error> {
    init_with(
        ds,
        key,
        InitOptions {
            verify,
            force: false,
        },
    )
}

/// [`init`], with `force` replacing an existing manifest: if it can be
/// read, what a stopped compaction left is removed first (the files it
/// marks obsolete and does not list, unlisted `part-*.parquet` files,
/// strata's temporaries and hidden outputs), so the new manifest does not
/// list rows twice; then every data file left is listed, under the next
/// generation. A manifest that cannot be read is replaced by one over
/// every data file.
///
/// # Errors
///
/// As [`init`] (an existing manifest only without `force`).
pub fn init_with(ds: &Dataset, key: &[String], opts: InitOptions) -> Result<Manifest, Error> {
    let (key, order) = parse_key(key)?;
    // A missing directory is named as such, before the lock is tried.
    ds.list()?;
    let _lock = ds.lock()?;
    let mut generation = 1;
    if let Some(text) = ds.read_manifest()? {
        if !opts.force {
            return Err(Error::Invalid(format!(
                "{} already has a manifest (rebuild it with --force)",
                ds.display()
            )));
        }
        let names = ds.list()?;
        match Manifest::parse(&text, &ds.file_display(crate::storage::MANIFEST)) {
            Ok(old) => {
                remove_leftovers_among(ds, &old, &names);
                generation = old.generation + 1;
            }
            Err(_) => {
                let none = Manifest::new(1, key.clone(), Vec::new(), Vec::new(), Vec::new());
                let hidden: Vec<(String, u64)> = names
                    .into_iter()
                    .filter(|(n, _)| n.starts_with('.'))
                    .collect();
                remove_leftovers_among(ds, &none, &hidden);
            }
        }
    }
    let listed: Vec<(String, u64)> = ds
        .list()?
        .into_iter()
        .filter(|(n, _)| is_data_file(n))
        .collect();
    if listed.is_empty() {
        return Err(Error::Invalid(format!(
            "{} has no .parquet files",
            ds.display()
        )));
    }
    let options: Vec<SortOptions> = order.iter().map(|&o| o.into()).collect();
    let mut first_schema: Option<(String, arrow_schema::SchemaRef)> = None;
    let mut files = Vec::with_capacity(listed.len());
    for (name, bytes) in listed {
        let (md, schema) = ds.parquet_footer(&name)?;
        same_schema(ds, &mut first_schema, &name, &schema)?;
        files.push(file_entry(
            ds,
            &name,
            bytes,
            &md,
            &schema,
            &key,
            &options,
            opts.verify,
        )?);
    }
    let m = Manifest::new(generation, key, order, files, Vec::new());
    m.write(ds)?;
    Ok(m)
}

/// Checks that file `name`'s schema has the same fields as the first
/// file's (`first`, set from this file when empty): the merge takes only
/// files of one schema.
fn same_schema(
    ds: &Dataset,
    first: &mut Option<(String, arrow_schema::SchemaRef)>,
    name: &str,
    schema: &arrow_schema::SchemaRef,
) -> Result<(), Error> {
    match first {
        None => {
            *first = Some((name.to_string(), Arc::clone(schema)));
            Ok(())
        }
        Some((first_name, first)) if first.fields() != schema.fields() => {
            Err(Error::Invalid(format!(
                "{} has a different schema from {}",
                ds.file_display(name),
                ds.file_display(first_name)
            )))
        }
        Some(_) => Ok(()),
    }
}

/// The manifest entry of file `name` (`bytes` long, its footer `md` and
/// `schema`): its rows and key bounds, from the statistics where they
/// bound the key and `verify` is off, else from its keys.
#[allow(clippy::too_many_arguments)]
fn file_entry(
    ds: &Dataset,
    name: &str,
    bytes: u64,
    md: &parquet::file::metadata::ParquetMetaData,
    schema: &arrow_schema::Schema,
    key: &[String],
    order: &[SortOptions],
    verify: bool,
) -> Result<FileEntry, Error> {
    let from_stats = if verify {
        None
    } else {
        // Statistics a decoder panics on are not used: the keys are read
        // instead.
        strata_parquet::guard::catch(|| statistics_bounds(md, schema, key, order))
            .unwrap_or(Ok(None))
            .map_err(|e| Error::Invalid(format!("{}: {e}", ds.file_display(name))))?
    };
    let (rows, min_key, max_key) = match from_stats {
        Some(b) => b,
        None => bounds(ds, name, key, order, verify)?,
    };
    Ok(FileEntry {
        name: name.to_string(),
        rows,
        bytes,
        min_key: to_hex(&min_key),
        max_key: to_hex(&max_key),
    })
}

/// Registers the data files `names` of `ds` in its manifest, under the
/// next generation. Each must be a visible `*.parquet` file of the
/// dataset, not listed yet, of the listed files' schema and sorted by the
/// key (every key is read and checked). The manifest is replaced in one
/// step, holding the compaction lock; nothing changes on an error.
///
/// # Errors
///
/// [`Error::Invalid`] for a name that breaks one of those rules, and as
/// [`Manifest::read`] and [`Manifest::write`].
pub fn add(ds: &Dataset, names: &[String]) -> Result<Manifest, Error> {
    if names.is_empty() {
        return Err(Error::Invalid("name at least one file to add".into()));
    }
    let _lock = ds.lock()?;
    let manifest = Manifest::read(ds)?;
    let present: std::collections::HashMap<String, u64> = ds.list()?.into_iter().collect();
    let order = manifest.sort_options();
    let mut first_schema = match manifest.files.first() {
        Some(f) => Some((f.name.clone(), ds.parquet_footer(&f.name)?.1)),
        None => None,
    };
    let mut files = manifest.files.clone();
    for name in names {
        let shown = ds.file_display(name);
        let outside = name.is_empty() || name.contains('/') || name.contains('\\') || name == "..";
        if outside || !is_data_file(name) {
            return Err(Error::Invalid(format!(
                "cannot add '{name}': give the name of a visible .parquet file in {}",
                ds.display()
            )));
        }
        if files.iter().any(|f| &f.name == name) {
            return Err(Error::Invalid(format!(
                "{shown} is already in the manifest"
            )));
        }
        if uncommitted_output(name, manifest.generation) {
            return Err(Error::Invalid(format!(
                "{shown} is the output of a compaction that never committed (its rows are still in the listed files); the next `strata compact run` removes it"
            )));
        }
        let Some(&bytes) = present.get(name) else {
            return Err(Error::Invalid(format!("{shown}: no such file")));
        };
        let (md, schema) = ds.parquet_footer(name)?;
        same_schema(ds, &mut first_schema, name, &schema)?;
        files.push(file_entry(
            ds,
            name,
            bytes,
            &md,
            &schema,
            &manifest.key,
            &order,
            true,
        )?);
    }
    let obsolete = manifest
        .obsolete
        .iter()
        .filter(|n| !names.contains(n))
        .cloned()
        .collect();
    let next = Manifest::new(
        manifest.generation + 1,
        manifest.key.clone(),
        manifest.order.clone(),
        files,
        obsolete,
    );
    next.write(ds)?;
    Ok(next)
}

/// A file's rows and the encoded keys that bound its keys.
type Bounds = (u64, Vec<u8>, Vec<u8>);

/// Rows and key bounds of a file from its footer: per key column the
/// smallest and largest encoding (in the column's order) of the row
/// groups' minimum and maximum statistics and of a null where the column
/// has nulls, concatenated (a strata-row key is its columns' encodings one
/// after another). `None` when some key column has no exact statistics in
/// some row group, or is floating point.
fn statistics_bounds(
    md: &parquet::file::metadata::ParquetMetaData,
    schema: &arrow_schema::Schema,
    key: &[String],
    order: &[SortOptions],
) -> Result<Option<Bounds>, Error> {
    use arrow_array::{Array, new_null_array};
    use arrow_schema::DataType;
    use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
    let groups = md.row_groups();
    let rows = groups.iter().map(|g| g.num_rows().max(0) as u64).sum();
    let (mut lo, mut hi) = (Vec::new(), Vec::new());
    for (i, k) in key.iter().enumerate() {
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
        let options = order.get(i).copied().unwrap_or_default();
        let Ok(encoder) = RowEncoder::new(vec![
            SortField::new(field.data_type().clone()).with_options(options),
        ]) else {
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
        let null = null_row.row(0).as_bytes();
        let (mut col_lo, mut col_hi): (Option<Vec<u8>>, Option<Vec<u8>>) = (None, None);
        let mut widen = |b: &[u8]| {
            if col_lo.as_deref().is_none_or(|l| b < l) {
                col_lo = Some(b.to_vec());
            }
            if col_hi.as_deref().is_none_or(|h| b > h) {
                col_hi = Some(b.to_vec());
            }
        };
        for (g, meta) in groups.iter().enumerate() {
            let n = meta.num_rows().max(0) as u64;
            if nulls.is_null(g) {
                return Ok(None);
            }
            let null_count = nulls.value(g);
            if null_count > 0 {
                widen(null);
            }
            if null_count >= n {
                continue; // no values, only nulls
            }
            let exact = |a: &arrow_array::BooleanArray| a.is_valid(g) && a.value(g);
            if mins.is_null(g) || maxes.is_null(g) || !exact(&min_exact) || !exact(&max_exact) {
                return Ok(None);
            }
            // In descending order the maximum encodes below the minimum.
            widen(mins_rows.row(g).as_bytes());
            widen(maxes_rows.row(g).as_bytes());
        }
        // A column of nulls only (or no rows): both bounds are null.
        lo.extend(col_lo.unwrap_or_else(|| null.to_vec()));
        hi.extend(col_hi.unwrap_or_else(|| null.to_vec()));
    }
    Ok(Some((rows, lo, hi)))
}

/// Rows and first/last encoded keys (in `order`) of a sorted file; with
/// `verify`, also checks every row is not below the one before.
fn bounds(
    ds: &Dataset,
    name: &str,
    key: &[String],
    order: &[SortOptions],
    verify: bool,
) -> Result<Bounds, Error> {
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
                return Err(not_sorted(Path::new(&display), &key_terms(key, order)).into());
            }
        }
        if first.is_none() {
            first = Some(keys.row(0).as_bytes().to_vec());
        }
        last = keys.row(n - 1).as_bytes().to_vec();
        Ok(())
    };
    let mut rows = 0u64;
    let mut encoder: Option<KeyColumns> = None;
    ds.scan_columns(name, key, &mut |b| {
        if encoder.is_none() {
            let named: Vec<(&str, SortOptions)> = key
                .iter()
                .enumerate()
                .map(|(i, k)| (k.as_str(), order.get(i).copied().unwrap_or_default()))
                .collect();
            encoder = Some(KeyColumns::new(&b.schema(), &named).map_err(|e| match e {
                strata_row::Error::UnknownColumn { name, .. } => {
                    Error::Invalid(format!("{display}: the file has no key column '{name}'"))
                }
                e => Error::Invalid(format!("{display}: cannot order by the key: {e}")),
            })?);
        }
        let enc = encoder
            .as_ref()
            .ok_or_else(|| Error::Invalid("no key encoder".into()))?;
        let keys = enc
            .encode(b)
            .map_err(|e| Error::Invalid(format!("{display}: cannot encode the key: {e}")))?;
        each(&keys)?;
        rows += b.num_rows() as u64;
        Ok(())
    })?;
    Ok((rows, first.unwrap_or_default(), last))
}

/// The key as `COL[:desc]...` terms, for messages.
fn key_terms(key: &[String], order: &[SortOptions]) -> Vec<String> {
    let m = Manifest::new(
        1,
        key.to_vec(),
        order.iter().map(|&o| o.into()).collect(),
        Vec::new(),
        Vec::new(),
    );
    vec![m.key_text()]
}

/// What [`execute`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Executed {
    /// The new manifest.
    pub manifest: Manifest,
    /// Names of the replaced files.
    pub replaced: Vec<String>,
    /// The files written, under their final names.
    pub written: Vec<MergedFile>,
}

/// Counters a caller may watch while [`execute_with`] runs (for a
/// progress bar).
#[derive(Debug, Default)]
pub struct Progress {
    /// Rows of the picked files, set before the merge starts.
    pub total_rows: AtomicU64,
    /// Rows the merge has written so far.
    pub rows_written: Arc<AtomicU64>,
}

/// How [`execute_with`] and [`run_with`] run a compaction.
pub struct ExecuteOptions<'a> {
    /// Merged output files are closed at about this many bytes.
    pub target_file_bytes: u64,
    /// Called at each [`Step`]; an error from it stops the run there, as
    /// a crash would.
    pub hook: &'a dyn Fn(Step) -> Result<(), Error>,
    /// Counters to update as the merge goes.
    pub progress: Option<&'a Progress>,
}

impl std::fmt::Debug for ExecuteOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecuteOptions")
            .field("target_file_bytes", &self.target_file_bytes)
            .field("progress", &self.progress)
            .finish_non_exhaustive()
    }
}

/// Removes files of `ds` that `manifest` does not list and strata wrote
/// (`part-*.parquet`) or the manifest marks obsolete, and strata's
/// temporaries and hidden outputs: what a stopped run left. Returns the
/// names removed. Not for use while a compaction of `ds` runs: its
/// unfinished outputs look the same ([`execute`] calls this holding the
/// dataset's lock).
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
    let present: std::collections::HashSet<&str> = names.iter().map(|(n, _)| n.as_str()).collect();
    // A machine crash in the switch may keep the manifest's rename and
    // not an output's, or a replaced file's rename and not the
    // manifest's: a listed file found only under its hidden name is put
    // back.
    let mut restored = std::collections::HashSet::new();
    for f in &manifest.files {
        if present.contains(f.name.as_str()) {
            continue;
        }
        for hidden in [hidden_name(&f.name), retired_name(&f.name)] {
            if present.contains(hidden.as_str()) && ds.restore(&hidden, &f.name).is_ok() {
                restored.insert(hidden);
                break;
            }
        }
    }
    let mut removed = Vec::new();
    for (name, _) in names {
        // Compaction's own hidden outputs and replaced files (only one
        // run holds the lock), and the temporaries (`.NAME.PID.strata-tmp`)
        // of processes that are gone: another strata process may be
        // writing into the dataset's directory right now.
        let hidden = name.starts_with('.')
            && (name.ends_with(HIDDEN_SUFFIX)
                || name.ends_with(RETIRED_SUFFIX)
                || strata_store::output::is_stale_temporary(name));
        let ours = uncommitted_output(name, manifest.generation)
            || hidden
            || manifest.obsolete.contains(name);
        if ours
            && !listed.contains(name.as_str())
            && !restored.contains(name)
            && ds.remove(name).is_ok()
        {
            removed.push(name.clone());
        }
    }
    removed
}

/// Whether `name` is an output of a compaction that never committed: named
/// as outputs are (`part-GGGGGG-NNNNNNNN.parquet`) for a generation after
/// the manifest's. Other `part-*` files (a user's, another writer's, or
/// the outputs of a committed generation) are never taken for one.
fn uncommitted_output(name: &str, generation: u64) -> bool {
    let Some((g, n)) = name
        .strip_prefix("part-")
        .and_then(|n| n.strip_suffix(".parquet"))
        .and_then(|n| n.split_once('-'))
    else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    digits(g)
        && g.len() >= 6
        && n.len() == 8
        && digits(n)
        && g.parse::<u64>().is_ok_and(|g| g > generation)
}

/// Merges the manifest's files at indices `picked` into files of about
/// `target_file_bytes`, swaps the manifest, then removes the replaced
/// files ([`execute_with`] without progress counters).
///
/// # Errors
///
/// As [`execute_with`].
pub fn execute(
    ds: &Dataset,
    picked: &[usize],
    target_file_bytes: u64,
    hook: &dyn Fn(Step) -> Result<(), Error>,
) -> Result<Executed, Error> {
    execute_with(
        ds,
        picked,
        &ExecuteOptions {
            target_file_bytes,
            hook,
            progress: None,
        },
    )
}

/// Merges the manifest's files at indices `picked` into hidden files of
/// about `opts.target_file_bytes`, then switches the dataset to them (see
/// the module docs): outputs renamed to their final names, the manifest
/// replaced, the replaced files removed. `opts.hook` is called at each
/// [`Step`]; an error from it stops the run there, as a crash would.
///
/// # Errors
///
/// As [`merge_files`] and [`Manifest::write`]; [`Error::Invalid`]
/// for an index out of range.
pub fn execute_with(
    ds: &Dataset,
    picked: &[usize],
    opts: &ExecuteOptions<'_>,
) -> Result<Executed, Error> {
    let hook = opts.hook;
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
    if let Some(p) = opts.progress {
        let rows = picked.iter().map(|&i| manifest.files[i].rows).sum();
        p.total_rows
            .store(rows, std::sync::atomic::Ordering::Relaxed);
    }
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
        order: manifest.sort_options(),
        target_file_bytes: opts.target_file_bytes.max(1),
        batch_rows: 8192,
        threads: 0,
        rows_written: opts.progress.map(|p| Arc::clone(&p.rows_written)),
        ..MergeConfig::default()
    };
    let final_name = |n: usize| format!("part-{generation:06}-{n:08}.parquet");
    let mut written = merge_files(
        &inputs,
        &ds.out_dir(&scratch_path),
        &|n| hidden_name(&final_name(n)),
        &cfg,
    )?;
    // (local hidden file, final name) of every output.
    let outputs: Vec<(PathBuf, String)> = written
        .iter()
        .map(|w| {
            let hidden = w
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let name = hidden
                .strip_prefix('.')
                .and_then(|n| n.strip_suffix(HIDDEN_SUFFIX))
                .unwrap_or(&hidden)
                .to_string();
            (w.path.clone(), name)
        })
        .collect();
    let remove_hidden = |e: Error| {
        for (path, _) in &outputs {
            let _ = std::fs::remove_file(path);
        }
        e
    };
    hook(Step::Merged).map_err(remove_hidden)?;
    let mut files: Vec<FileEntry> = manifest
        .files
        .iter()
        .enumerate()
        .filter(|(i, _)| picked.binary_search(i).is_err())
        .map(|(_, f)| f.clone())
        .collect();
    for (w, (_, name)) in written.iter().zip(&outputs) {
        files.push(FileEntry {
            name: name.clone(),
            rows: w.rows,
            bytes: w.bytes,
            min_key: to_hex(&w.min_key),
            max_key: to_hex(&w.max_key),
        });
    }
    let next = Manifest::new(
        generation,
        manifest.key.clone(),
        manifest.order.clone(),
        files,
        replaced.clone(),
    );
    let prepared = ds.prepare_manifest(&next.text()?).map_err(remove_hidden)?;
    // The switch: everything slow (syncing the outputs and the manifest's
    // temporary, uploads) is done; renames and removals follow.
    ds.reveal(&outputs).map_err(remove_hidden)?;
    drop(scratch);
    if let Err(e) = ds.commit_manifest(prepared) {
        // A local rename that failed did not happen: the outputs are
        // unlisted. A store may have taken the new manifest after all (an
        // error on the last retry), and then it names them; if it did
        // not, the next run removes them as leftovers.
        if ds.dir().is_some() {
            for (_, name) in &outputs {
                let _ = ds.remove(name);
            }
        }
        return Err(e);
    }
    hook(Step::Committed)?;
    // Out of the glob by a rename each; removed only once the directory
    // is synced, so that no crash keeps a removal and loses the manifest's
    // rename.
    let retired: Vec<String> = replaced
        .iter()
        .map(|n| ds.retire(n, retired_name(n)))
        .collect();
    ds.sync();
    for name in &retired {
        let _ = ds.remove(name);
    }
    for (w, (_, name)) in written.iter_mut().zip(&outputs) {
        w.path = match ds.dir() {
            Some(dir) => dir.join(name),
            None => PathBuf::from(ds.file_display(name)),
        };
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
    run_with(
        ds,
        opts,
        &ExecuteOptions {
            target_file_bytes,
            hook,
            progress: None,
        },
    )
}

/// [`run`] with [`ExecuteOptions`].
///
/// # Errors
///
/// As [`plan_dataset`] and [`execute_with`].
pub fn run_with(
    ds: &Dataset,
    opts: &PlannerOptions,
    exec: &ExecuteOptions<'_>,
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
    let done = execute_with(ds, &picked, exec)?;
    Ok((p, Some(done)))
}

/// Turns a manifest's key bounds back into values, for people to read:
/// the key columns' types come from one file's footer.
pub struct KeyDecoder {
    encoder: RowEncoder,
    parser: strata_row::RowParser,
}

impl KeyDecoder {
    /// The decoder of `manifest`'s keys, from the schema of its first file.
    ///
    /// # Errors
    /// The footer cannot be read, or a key column is not in it or has a
    /// type keys cannot have.
    pub fn open(ds: &Dataset, manifest: &Manifest) -> Result<KeyDecoder, Error> {
        let first = manifest
            .files
            .first()
            .ok_or_else(|| Error::Invalid("the dataset has no files".into()))?;
        let (_, schema) = ds.parquet_footer(&first.name)?;
        let options = manifest.sort_options();
        let mut fields = Vec::with_capacity(manifest.key.len());
        for (i, k) in manifest.key.iter().enumerate() {
            let field = schema
                .field_with_name(k)
                .map_err(|_| Error::Invalid(format!("{}: no key column `{k}`", first.name)))?;
            fields.push(
                SortField::new(field.data_type().clone())
                    .with_options(options.get(i).copied().unwrap_or_default()),
            );
        }
        let encoder =
            RowEncoder::new(fields).map_err(|e| Error::Invalid(format!("key columns: {e}")))?;
        let parser = encoder.parser();
        Ok(KeyDecoder { encoder, parser })
    }

    /// One single-row array per key column, or `None` when `key` is not a
    /// key of this dataset (malformed bytes are never a panic).
    pub fn decode(&self, key: &[u8]) -> Option<Vec<arrow_array::ArrayRef>> {
        self.encoder.decode_rows([self.parser.parse(key)]).ok()
    }
}
